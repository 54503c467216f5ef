/**
 * What the package directory last said about a package, kept briefly so GET /inbox does not wait on the
 * directory (the marketplace over HTTP, or a folder read and digested) for each waiting install approval. An
 * approval is still listed only while the directory publishes its exact package, version and digest: the answer
 * it is checked against is never older than the TTL, and younger ones are refreshed off the read path
 * (stale-while-revalidate). docs/decisions.md, "Waiting install approvals without a directory round trip".
 */
import { Context, Duration, type Effect } from "effect"
import type { ListingBinding } from "./InstallPolicy.js"

/** The directory's answer: what it publishes under the package id, or null when it lists nothing readable there. */
export type Published = ListingBinding | null

export interface Freshness {
  /** An answer this old is refreshed in the background by the next read, which still uses it. */
  readonly refreshAfter: Duration.Duration
  /** An answer this old is not used: a change in the directory shows in GET /inbox within this time. */
  readonly ttl: Duration.Duration
  /**
   * A package without a usable answer is waited for at most this long, counted from when its directory request
   * started (so a directory that hangs holds only the reads of that first moment, not every later one).
   */
  readonly firstWait: Duration.Duration
}

export const defaultFreshness: Freshness = {
  refreshAfter: Duration.seconds(10),
  ttl: Duration.seconds(30),
  // The bound GET /inbox had per approval before the cache; now per package and only while nothing is known.
  firstWait: Duration.seconds(2)
}

/** When the entry of a package was last answered and when its directory request in flight (if any) started. */
export interface EntryTimes {
  readonly answeredAt: number | null
  readonly requestStartedAt: number | null
}

export interface ReadPlan {
  /** The known answer may be used as it is. */
  readonly use: boolean
  /** This read starts a directory request (none is in flight and the answer is missing or ageing). */
  readonly start: boolean
  /** How long this read may wait for the request in flight when it has no usable answer. */
  readonly waitMillis: number
}

/** What one read does with one package's entry at `now` (pure: the table test in test/node/inbox). */
export const planRead = (entry: EntryTimes | undefined, now: number, freshness: Freshness): ReadPlan => {
  const age = entry?.answeredAt == null ? Number.POSITIVE_INFINITY : now - entry.answeredAt
  const use = age < Duration.toMillis(freshness.ttl)
  const inFlight = entry?.requestStartedAt ?? null
  const start = inFlight === null && age >= Duration.toMillis(freshness.refreshAfter)
  const startedAt = start ? now : inFlight
  const waitMillis = use || startedAt === null ? 0 : Math.max(0, startedAt + Duration.toMillis(freshness.firstWait) - now)
  return { use, start, waitMillis }
}

export class ListingCache extends Context.Tag("clark/node/ListingCache")<ListingCache, {
  /**
   * The directory's answers for these package ids: a usable known answer at once (an ageing one also starts its
   * refresh in the background); a package without one waits within `firstWait` for the one request shared by
   * every reader of it. Absent from the map: no answer in time, so the caller lists nothing for it this time.
   */
  readonly published: (packageIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, Published>>
  /** Forgets a package's answer: the node changed what the directory says about it (a folder added). */
  readonly invalidate: (packageId: string) => Effect.Effect<void>
  /** Waits until the directory requests in flight now have ended (the tests and the bench wait on this). */
  readonly settled: Effect.Effect<void>
}>() {}
