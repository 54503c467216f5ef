/**
 * PackageFolders on the local file system. One walk serves both the digest of a folder and its copy into
 * the cache: entries are examined with `lstat` semantics (a symbolic link is refused, never followed), each
 * file is read once through a handle whose `fstat` says how many names it has (a hard link is refused), and
 * the bytes read are the bytes hashed and, for a copy, the bytes written.
 */
import { Effect, Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { contentDigest, type FileEntry, ignoredNames, packageLimits } from "../../../services/node/ContentDigest.js"
import { type FolderScan, PackageFolders } from "../../../services/node/PackageFolders.js"
import { DigestMismatch, LocalSourceUnreadable, PackageCacheUnavailable } from "../../../services/node/PackageErrors.js"

type Limits = { readonly [K in keyof typeof packageLimits]: number }

interface Walked {
  readonly folders: ReadonlyArray<string>
  readonly files: ReadonlyArray<string>
}

const unreadable = (reason: LocalSourceUnreadable["reason"], at?: string, limit?: number) =>
  new LocalSourceUnreadable({
    reason,
    ...(at === undefined ? {} : { path: at }),
    ...(limit === undefined ? {} : { limit })
  })

/**
 * The event loop gets a turn between batches. File system calls are made synchronously within a batch:
 * through the promise API every open, stat, read and close is a trip to libuv's thread pool, and on 5,000
 * files those trips cost four times the hashing itself (measured: 1.0-1.4 s against 0.15-0.35 s for the
 * same 64 MiB read and hashed in place); a batch of at most 1 MiB or 64 entries holds the loop for a few
 * milliseconds.
 */
const batchBytes = 1024 * 1024
const batchEntries = 64
const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Runs `step` (synchronous, throwing a typed failure or anything else) and answers what it threw. */
const attempt = <E>(step: () => void, failure: (cause: unknown) => E): E | undefined => {
  try {
    step()
    return undefined
  } catch (cause) {
    return failure(cause)
  }
}

/** Permission and vanished-file errors are the folder's problem; anything else too, but said as unreadable. */
const readFailure = (relative: string) => (cause: unknown) =>
  unreadable((cause as NodeJS.ErrnoException)?.code === "ELOOP" ? "link" : "unreadable", relative)

const toPosix = (relative: string) => relative.split(path.sep).join("/")

/** Every folder and file below `root` (relative paths), within the limits. */
const walk = (root: string, limits: Limits) =>
  Effect.gen(function*() {
    const top = yield* Effect.tryPromise({ try: () => fs.lstat(root), catch: () => unreadable("not-a-folder") })
    if (!top.isDirectory()) return yield* unreadable("not-a-folder")
    const folders: Array<string> = []
    const files: Array<string> = []
    let level: Array<string> = [""]
    for (let depth = 1; level.length > 0; depth++) {
      const next: Array<string> = []
      for (let start = 0; start < level.length; start += batchEntries) {
        const refused = attempt(() => {
          for (const folder of level.slice(start, start + batchEntries)) {
            let entries: Array<fsSync.Dirent>
            try {
              entries = fsSync.readdirSync(path.join(root, folder), { withFileTypes: true })
            } catch (cause) {
              throw readFailure(toPosix(folder))(cause)
            }
            for (const entry of entries) {
              if (ignoredNames.has(entry.name)) continue
              const relative = folder === "" ? entry.name : path.join(folder, entry.name)
              if (entry.isSymbolicLink()) throw unreadable("link", toPosix(relative))
              if (entry.isDirectory()) {
                if (depth >= limits.depth) throw unreadable("too-deep", toPosix(relative), limits.depth)
                if (folders.length >= limits.folders) throw unreadable("too-many-folders", undefined, limits.folders)
                folders.push(relative)
                next.push(relative)
              } else if (entry.isFile()) {
                if (files.length >= limits.files) throw unreadable("too-many-files", undefined, limits.files)
                files.push(relative)
              } else {
                throw unreadable("special-file", toPosix(relative))
              }
            }
          }
        }, (cause) => cause instanceof LocalSourceUnreadable ? cause : unreadable("unreadable"))
        if (refused !== undefined) return yield* refused
        yield* turn
      }
      level = next
    }
    return { folders, files } satisfies Walked
  })

/** One file's bytes through a descriptor that never follows a link and says how many names the file has. */
const readOne = (root: string, relative: string, limits: Limits, total: { bytes: number }): Buffer => {
  const name = toPosix(relative)
  let fd: number
  try {
    fd = fsSync.openSync(path.join(root, relative), fsSync.constants.O_RDONLY | fsSync.constants.O_NOFOLLOW)
  } catch (cause) {
    throw readFailure(name)(cause)
  }
  try {
    const stat = fsSync.fstatSync(fd)
    if (!stat.isFile()) throw unreadable("special-file", name)
    if (stat.nlink > 1) throw unreadable("link", name)
    total.bytes += stat.size
    if (total.bytes > limits.bytes) throw unreadable("too-large", undefined, limits.bytes)
    const bytes = Buffer.allocUnsafe(stat.size)
    let read = 0
    for (let got = -1; read < stat.size && got !== 0; read += got) got = fsSync.readSync(fd, bytes, read, stat.size - read, read)
    // A file cut short while read is hashed as read; the copy's digest check catches the change.
    return read === stat.size ? bytes : bytes.subarray(0, read)
  } catch (cause) {
    throw cause instanceof LocalSourceUnreadable ? cause : readFailure(name)(cause)
  } finally {
    fsSync.closeSync(fd)
  }
}

/**
 * Reads each file once, refusing hard links and a total over the byte limit, and hands its bytes to `use`
 * (which throws `E` to stop) before hashing them.
 */
const readFiles = <E = never>(
  root: string,
  walked: Walked,
  limits: Limits,
  use?: { readonly write: (relative: string, bytes: Uint8Array) => void; readonly failure: (cause: unknown) => E }
) =>
  Effect.gen(function*() {
    const total = { bytes: 0 }
    const entries: Array<FileEntry> = []
    let index = 0
    while (index < walked.files.length) {
      const refused = attempt<LocalSourceUnreadable | E>(() => {
        let batch = 0
        for (let count = 0; index < walked.files.length && count < batchEntries && batch < batchBytes; count++, index++) {
          const relative = walked.files[index]!
          const bytes = readOne(root, relative, limits, total)
          batch += bytes.byteLength
          if (use !== undefined) {
            try {
              use.write(relative, bytes)
            } catch (cause) {
              throw { written: use.failure(cause) }
            }
          }
          entries.push({ path: toPosix(relative), size: bytes.byteLength, sha256: createHash("sha256").update(bytes).digest("hex") })
        }
      }, (cause) =>
        cause instanceof LocalSourceUnreadable
          ? cause
          : typeof cause === "object" && cause !== null && "written" in cause
          ? (cause as { readonly written: E }).written
          : unreadable("unreadable"))
      if (refused !== undefined) return yield* Effect.fail(refused)
      yield* turn
    }
    const files = entries.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
    const bytes = files.reduce((sum, file) => sum + file.size, 0)
    if (bytes > limits.bytes) return yield* unreadable("too-large", undefined, limits.bytes)
    return { files, folders: walked.folders.length, bytes, digest: contentDigest(files) } satisfies FolderScan
  })

const digestPattern = /^sha256:[0-9a-f]{64}$/

export interface Options {
  /** The package cache: one folder per content digest. */
  readonly cacheDir: string
  /** Tests lower these to try each limit on a small folder. */
  readonly limits?: Partial<Limits>
}

export const make = (options: Options) => {
  const limits: Limits = { ...packageLimits, ...options.limits }
  const cacheFailure = (cause: unknown) =>
    new PackageCacheUnavailable({ detail: (cause as NodeJS.ErrnoException)?.code ?? "write failed" })

  const scan = (root: string) =>
    Effect.flatMap(walk(root, limits), (walked) => readFiles(root, walked, limits))

  const removeQuietly = (target: string) => Effect.promise(() => fs.rm(target, { recursive: true, force: true }).catch(() => {}))

  const copyToCache = (root: string, expected: string) =>
    Effect.gen(function*() {
      if (!digestPattern.test(expected)) return yield* new DigestMismatch({ expected, actual: "none" })
      const entry = path.join(options.cacheDir, expected.slice("sha256:".length))
      // A cache entry is trusted only as far as its bytes still hash to its name.
      const existing = yield* scan(entry).pipe(Effect.option)
      if (existing._tag === "Some" && existing.value.digest === expected) return { path: entry, scan: existing.value }
      if (existing._tag === "Some") yield* removeQuietly(entry)

      const walked = yield* walk(root, limits)
      const staging = path.join(options.cacheDir, `.staging-${randomBytes(8).toString("hex")}`)
      yield* Effect.tryPromise({ try: () => fs.mkdir(staging, { recursive: true, mode: 0o755 }), catch: cacheFailure })
      return yield* Effect.gen(function*() {
        for (const folder of walked.folders) {
          yield* Effect.tryPromise({ try: () => fs.mkdir(path.join(staging, folder), { mode: 0o755 }), catch: cacheFailure })
        }
        const copied = yield* readFiles(root, walked, limits, {
          // Read-only: a package cannot rewrite itself under the digest it was approved with.
          write: (relative, bytes) => fsSync.writeFileSync(path.join(staging, relative), bytes, { mode: 0o444, flag: "wx" }),
          failure: cacheFailure
        })
        if (copied.digest !== expected) return yield* new DigestMismatch({ expected, actual: copied.digest })
        yield* Effect.tryPromise({ try: () => fs.rename(staging, entry), catch: (cause) => cause }).pipe(
          // Another install of the same digest got there first: its entry is the same bytes.
          Effect.catchAll((cause) =>
            (cause as NodeJS.ErrnoException)?.code === "ENOTEMPTY" || (cause as NodeJS.ErrnoException)?.code === "EEXIST"
              ? removeQuietly(staging)
              : Effect.fail(cacheFailure(cause)))
        )
        return { path: entry, scan: copied }
      }).pipe(Effect.onError(() => removeQuietly(staging)))
    })

  return PackageFolders.of({ scan, copyToCache })
}

export const layer = (options: Options) => Layer.succeed(PackageFolders, make(options))
