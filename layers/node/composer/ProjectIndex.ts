/**
 * The files and folders of the approved project folders, walked once and kept in memory, so a suggestion over a
 * project of 100,000 files is a scan of an array, not a walk (docs/benchmarks.md, bench:composer). An index
 * older than `maxAge` is served as it stands while a new walk runs beside it; suggestions may be a little behind
 * the disk, and a reference chosen from them is checked on the disk again when the message arrives.
 *
 * The walk never follows a symbolic link, skips `.git` and `node_modules`, and stops at `maxEntries`.
 */
import { Clock, Duration, Effect, HashMap, Option, Ref } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { rank as rankOf } from "../../../services/node/Composer.js"

export interface Entry {
  /** `/`-separated, relative to the project folder. */
  readonly path: string
  readonly lowerPath: string
  readonly lowerName: string
  readonly folder: boolean
}

export interface Index {
  readonly entries: ReadonlyArray<Entry>
  readonly truncated: boolean
  readonly builtAtMs: number
  /** Every lower-case path, each followed by a newline: one native search finds the entries that match. */
  readonly haystack: string
  /** Where each entry's path starts in `haystack`. */
  readonly starts: Int32Array
  /** The shallowest entries, for an empty query. */
  readonly shallow: ReadonlyArray<Entry>
}

/** The searchable form of walked entries. */
export const indexOf = (entries: ReadonlyArray<Entry>, truncated: boolean, builtAtMs: number): Index => {
  const starts = new Int32Array(entries.length)
  let at = 0
  entries.forEach((entry, i) => {
    starts[i] = at
    at += entry.lowerPath.length + 1
  })
  return {
    entries,
    truncated,
    builtAtMs,
    haystack: entries.map((entry) => `${entry.lowerPath}\n`).join(""),
    starts,
    shallow: best(entries, "", 8).map((picked) => picked.entry)
  }
}

export const skipped: ReadonlySet<string> = new Set([".git", "node_modules"])

/** Breadth first, so a cut-off index still holds the top of the project. */
export const walk = async (root: string, maxEntries: number): Promise<{ entries: Array<Entry>; truncated: boolean }> => {
  const entries: Array<Entry> = []
  let level: Array<string> = [""]
  while (level.length > 0) {
    const next: Array<string> = []
    for (const relative of level) {
      let children
      try {
        children = await fs.readdir(path.join(root, relative), { withFileTypes: true })
      } catch {
        continue // unreadable or gone meanwhile: left out
      }
      for (const child of children) {
        if (skipped.has(child.name)) continue
        const folder = child.isDirectory()
        if (!folder && !child.isFile()) continue // links, sockets, devices
        const childPath = relative === "" ? child.name : `${relative}/${child.name}`
        entries.push({ path: childPath, lowerPath: childPath.toLowerCase(), lowerName: child.name.toLowerCase(), folder })
        if (entries.length >= maxEntries) return { entries, truncated: true }
        if (folder) next.push(childPath)
      }
    }
    level = next
  }
  return { entries, truncated: false }
}

export interface Options {
  readonly maxAge: Duration.Duration
  readonly maxEntries: number
}

export const defaults: Options = { maxAge: Duration.seconds(60), maxEntries: 200_000 }

interface Slot {
  readonly index: Option.Option<Index>
  readonly refreshing: boolean
}

export const make = (options: Options = defaults) =>
  Effect.gen(function*() {
    const slots = yield* Ref.make(HashMap.empty<string, Slot>())

    const build = (folder: string) =>
      Effect.gen(function*() {
        const walked = yield* Effect.promise(() => walk(folder, options.maxEntries))
        const index = indexOf(walked.entries, walked.truncated, yield* Clock.currentTimeMillis)
        const built: Slot = { index: Option.some(index), refreshing: false }
        yield* Ref.update(slots, HashMap.set(folder, built))
        return index
      })

    /** Claims the refresh of `folder` (true) unless another fiber holds it. */
    const claim = (folder: string) =>
      Ref.modify(slots, (map): readonly [boolean, HashMap.HashMap<string, Slot>] => {
        const slot = HashMap.get(map, folder)
        if (Option.isSome(slot) && slot.value.refreshing) return [false, map] as const
        const index = Option.flatMap(slot, (s) => s.index)
        return [true, HashMap.set(map, folder, { index, refreshing: true })] as const
      })

    /** The folder's index: walked now the first time, otherwise as kept (refreshed beside when old). */
    const get = (folder: string): Effect.Effect<Index> =>
      Effect.gen(function*() {
        const slot = HashMap.get(yield* Ref.get(slots), folder)
        const kept = Option.flatMap(slot, (s) => s.index)
        if (Option.isNone(kept)) {
          yield* claim(folder)
          return yield* build(folder)
        }
        const now = yield* Clock.currentTimeMillis
        if (now - kept.value.builtAtMs >= Duration.toMillis(options.maxAge) && (yield* claim(folder))) {
          yield* Effect.forkDaemon(build(folder))
        }
        return kept.value
      })

    /** Forgets folders no longer approved. */
    const retain = (folders: ReadonlyArray<string>) =>
      Ref.update(slots, HashMap.filter((_, folder) => folders.includes(folder)))

    return { get, retain } as const
  })

/** The best `limit` entries for a lower-case query: name prefix, then name, then path; shallower first. */
export const best = (entries: ReadonlyArray<Entry>, query: string, limit: number) => {
  const picked: Array<{ readonly entry: Entry; readonly rank: number }> = []
  const before = (a: { entry: Entry; rank: number }, b: { entry: Entry; rank: number }) =>
    a.rank !== b.rank ? a.rank < b.rank : a.entry.path.length !== b.entry.path.length
      ? a.entry.path.length < b.entry.path.length
      : a.entry.path < b.entry.path
  for (const entry of entries) {
    const rank = rankOf(query, entry.lowerName, entry.lowerPath)
    if (rank < 0) continue
    const candidate = { entry, rank }
    if (picked.length === limit && !before(candidate, picked[limit - 1]!)) continue
    let at = picked.length
    while (at > 0 && before(candidate, picked[at - 1]!)) at--
    picked.splice(at, 0, candidate)
    if (picked.length > limit) picked.pop()
  }
  return picked
}

/**
 * `best` over an index: the query (lower-case, no newline) is found by native searches of the haystack, so only
 * the entries that contain it are ranked.
 */
export const search = (index: Index, query: string, limit: number) => {
  if (query === "" || query.includes("\n")) {
    return query === "" ? index.shallow.slice(0, limit).map((entry) => ({ entry, rank: 2 })) : []
  }
  const matching: Array<Entry> = []
  let from = 0
  for (;;) {
    const found = index.haystack.indexOf(query, from)
    if (found < 0) break
    // The entry holding `found`: the last start at or before it.
    let low = 0
    let high = index.starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (index.starts[middle]! <= found) low = middle
      else high = middle - 1
    }
    matching.push(index.entries[low]!)
    from = low + 1 < index.starts.length ? index.starts[low + 1]! : index.haystack.length
  }
  return best(matching, query, limit)
}
