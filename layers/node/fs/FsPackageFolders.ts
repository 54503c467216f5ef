/**
 * PackageFolders on the local file system. One walk serves both the digest of a folder and its copy into
 * the cache: entries are examined with `lstat` semantics (a symbolic link is refused, never followed), each
 * file is read once through a handle whose `fstat` says how many names it has (a hard link is refused), and
 * the bytes read are the bytes hashed and, for a copy, the bytes written.
 */
import { Effect, Layer } from "effect"
import { createHash, randomBytes } from "node:crypto"
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
      for (const folder of level) {
        const entries = yield* Effect.tryPromise({
          try: () => fs.readdir(path.join(root, folder), { withFileTypes: true }),
          catch: readFailure(toPosix(folder))
        })
        for (const entry of entries) {
          if (ignoredNames.has(entry.name)) continue
          const relative = folder === "" ? entry.name : path.join(folder, entry.name)
          if (entry.isSymbolicLink()) return yield* unreadable("link", toPosix(relative))
          if (entry.isDirectory()) {
            if (depth >= limits.depth) return yield* unreadable("too-deep", toPosix(relative), limits.depth)
            if (folders.length >= limits.folders) return yield* unreadable("too-many-folders", undefined, limits.folders)
            folders.push(relative)
            next.push(relative)
          } else if (entry.isFile()) {
            if (files.length >= limits.files) return yield* unreadable("too-many-files", undefined, limits.files)
            files.push(relative)
          } else {
            return yield* unreadable("special-file", toPosix(relative))
          }
        }
      }
      level = next
    }
    return { folders, files } satisfies Walked
  })

/**
 * Reads each file once (at most 16 at a time), refusing hard links and a total over the byte limit, and
 * hands its bytes to `use` before hashing them.
 */
const readFiles = <E>(
  root: string,
  walked: Walked,
  limits: Limits,
  use: (relative: string, bytes: Uint8Array) => Effect.Effect<void, E>
) =>
  Effect.gen(function*() {
    let total = 0
    const entries = yield* Effect.forEach(walked.files, (relative) =>
      Effect.gen(function*() {
        const name = toPosix(relative)
        const bytes = yield* Effect.acquireUseRelease(
          Effect.tryPromise({ try: () => fs.open(path.join(root, relative), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW), catch: readFailure(name) }),
          (handle) =>
            Effect.gen(function*() {
              const stat = yield* Effect.tryPromise({ try: () => handle.stat(), catch: readFailure(name) })
              if (!stat.isFile()) return yield* unreadable("special-file", name)
              if (stat.nlink > 1) return yield* unreadable("link", name)
              total += stat.size
              if (total > limits.bytes) return yield* unreadable("too-large", undefined, limits.bytes)
              return yield* Effect.tryPromise({ try: () => handle.readFile(), catch: readFailure(name) })
            }),
          (handle) => Effect.promise(() => handle.close())
        )
        yield* use(relative, bytes)
        const entry: FileEntry = { path: name, size: bytes.byteLength, sha256: createHash("sha256").update(bytes).digest("hex") }
        return entry
      }), { concurrency: 16 })
    const files = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
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
    Effect.flatMap(walk(root, limits), (walked) => readFiles(root, walked, limits, () => Effect.void))

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
        const copied = yield* readFiles(root, walked, limits, (relative, bytes) =>
          Effect.tryPromise({
            // Read-only: a package cannot rewrite itself under the digest it was approved with.
            try: () => fs.writeFile(path.join(staging, relative), bytes, { mode: 0o444, flag: "wx" }),
            catch: cacheFailure
          }))
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
