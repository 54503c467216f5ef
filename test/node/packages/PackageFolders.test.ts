/**
 * Package folders on a real disk: the content digest against an independent computation, every limit and
 * kind of entry the install rules refuse, and the copy into the package cache.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as esbuild from "esbuild"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FsPackageFolders from "../../../layers/node/fs/FsPackageFolders.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const examples = path.resolve(here, "../../../examples/packages")

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "clark-folders-"))

/** Writes `files` (relative path → content) under a new folder. */
const folderWith = (files: Record<string, string>) => {
  const root = temp()
  for (const [relative, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
    fs.writeFileSync(path.join(root, relative), content)
  }
  return root
}

/** The digest as DESIGN.md defines it, computed here from `sha256sum`'s output rather than the node's code. */
const independentDigest = (root: string) => {
  const listed = execFileSync("sh", ["-c", "find . -type f -not -path './.git/*' -print0 | xargs -0 sha256sum"], { cwd: root })
    .toString().trim().split("\n")
    .map((line) => {
      const [sha, name] = [line.slice(0, 64), line.slice(66).replace(/^\.\//, "")]
      return { name, line: `${JSON.stringify([name, fs.statSync(path.join(root, name)).size, sha])}\n` }
    })
    .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))
  return `sha256:${createHash("sha256").update(listed.map((entry) => entry.line).join("")).digest("hex")}`
}

const folders = (limits?: FsPackageFolders.Options["limits"], cacheDir = temp()) =>
  FsPackageFolders.make({ cacheDir, ...(limits === undefined ? {} : { limits }) })

const refusal = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (outcome) => (Either.isLeft(outcome) ? outcome.left : "accepted"))

describe("the content digest", () => {
  it.effect.each(["harbour-theme", "notes-service", "tide-widget"])("of %s matches the documented form", (name) =>
    Effect.gen(function*() {
      const root = path.join(examples, name)
      const scan = yield* folders().scan(root)
      expect(scan.digest).toBe(independentDigest(root))
      expect(scan.files.map((file) => file.path)).toContain("package.json")
    }))

  it.effect("is the same for the same files, whatever their creation order; one byte or one name changes it", () =>
    Effect.gen(function*() {
      const a = folderWith({ "package.json": "{}", "b/z.txt": "zzz", "a.txt": "aaa" })
      const b = folderWith({ "a.txt": "aaa", "b/z.txt": "zzz", "package.json": "{}" })
      const same = yield* folders().scan(a)
      expect((yield* folders().scan(b)).digest).toBe(same.digest)
      fs.writeFileSync(path.join(b, "a.txt"), "aab")
      expect((yield* folders().scan(b)).digest).not.toBe(same.digest)
      fs.renameSync(path.join(a, "a.txt"), path.join(a, "c.txt"))
      expect((yield* folders().scan(a)).digest).not.toBe(same.digest)
    }))

  it.effect("leaves version-control folders out, as npm never packs them", () =>
    Effect.gen(function*() {
      const root = folderWith({ "package.json": "{}", ".git/HEAD": "ref: main", ".git/objects/x": "blob" })
      const scan = yield* folders().scan(root)
      expect(scan.files.map((file) => file.path)).toEqual(["package.json"])
      expect(scan.digest).toBe(independentDigest(root))
    }))
})

describe("what a package folder may not hold", () => {
  it.effect("more files, folders, depth or bytes than the limits", () =>
    Effect.gen(function*() {
      const root = folderWith({ "a/1": "1", "a/2": "2", "b/c/3": "3", "b/c/d/4": "4444" })
      expect(yield* refusal(folders({ files: 3 }).scan(root))).toMatchObject({ reason: "too-many-files", limit: 3 })
      expect(yield* refusal(folders({ folders: 3 }).scan(root))).toMatchObject({ reason: "too-many-folders", limit: 3 })
      expect(yield* refusal(folders({ depth: 3 }).scan(root))).toMatchObject({ reason: "too-deep", path: "b/c/d", limit: 3 })
      expect(yield* refusal(folders({ bytes: 6 }).scan(root))).toMatchObject({ reason: "too-large", limit: 6 })
      // Exactly at each limit is allowed.
      const scan = yield* folders({ files: 4, folders: 4, depth: 4, bytes: 7 }).scan(root)
      expect(scan).toMatchObject({ folders: 4, bytes: 7 })
    }))

  it.effect("a symbolic link, to a file or a folder, inside or outside", () =>
    Effect.gen(function*() {
      for (const target of ["/etc/hostname", "/etc", "a.txt"]) {
        const root = folderWith({ "a.txt": "a" })
        fs.symlinkSync(target, path.join(root, "link"))
        expect(yield* refusal(folders().scan(root))).toMatchObject({ _tag: "LocalSourceUnreadable", reason: "link", path: "link" })
      }
    }))

  it.effect("a hard link", () =>
    Effect.gen(function*() {
      const root = folderWith({ "a.txt": "a" })
      fs.linkSync(path.join(root, "a.txt"), path.join(root, "b.txt"))
      expect(yield* refusal(folders().scan(root))).toMatchObject({ reason: "link" })
    }))

  it.effect("a named pipe", () =>
    Effect.gen(function*() {
      const root = folderWith({ "a.txt": "a" })
      execFileSync("mkfifo", [path.join(root, "pipe")])
      expect(yield* refusal(folders().scan(root))).toMatchObject({ reason: "special-file", path: "pipe" })
    }))

  it.effect("a path that is a file, or nothing", () =>
    Effect.gen(function*() {
      const root = folderWith({ "a.txt": "a" })
      expect(yield* refusal(folders().scan(path.join(root, "a.txt")))).toMatchObject({ reason: "not-a-folder" })
      expect(yield* refusal(folders().scan(path.join(root, "missing")))).toMatchObject({ reason: "not-a-folder" })
    }))

  it("a file the node may not read (scanned by an unprivileged user)", () => {
    const root = folderWith({ "a.txt": "a", "secret/key.txt": "k" })
    fs.chmodSync(root, 0o755)
    fs.chmodSync(path.join(root, "secret"), 0o755)
    fs.chmodSync(path.join(root, "secret/key.txt"), 0o000)
    // Bundled into the temporary folder: the other user may not be able to read this checkout.
    const script = path.join(temp(), "scan.mjs")
    esbuild.buildSync({ entryPoints: [path.join(here, "fixtures/scan.ts")], bundle: true, platform: "node", format: "esm", outfile: script })
    fs.chmodSync(path.dirname(script), 0o755)
    const out = execFileSync(process.execPath, [script, root], { uid: 65534, gid: 65534, cwd: "/", env: { PATH: process.env.PATH } })
      .toString()
    expect(JSON.parse(out)).toMatchObject({ error: { _tag: "LocalSourceUnreadable", reason: "unreadable", path: "secret/key.txt" } })
  })
})

describe("the copy into the package cache", () => {
  it.effect("writes the entry named by the digest, read-only, and reuses it", () =>
    Effect.gen(function*() {
      const root = path.join(examples, "tide-widget")
      const cacheDir = temp()
      const service = folders(undefined, cacheDir)
      const { digest } = yield* service.scan(root)
      const copied = yield* service.copyToCache(root, digest)
      expect(copied.path).toBe(path.join(cacheDir, digest.slice("sha256:".length)))
      expect(independentDigest(copied.path)).toBe(digest)
      expect(fs.statSync(path.join(copied.path, "package.json")).mode & 0o777).toBe(0o444)
      expect(fs.readdirSync(cacheDir)).toEqual([path.basename(copied.path)])
      const again = yield* service.copyToCache(root, digest)
      expect(again.path).toBe(copied.path)
      expect(fs.readdirSync(cacheDir)).toEqual([path.basename(copied.path)])
    }))

  it.effect("a folder changed since it was listed is a digest mismatch, leaving nothing in the cache", () =>
    Effect.gen(function*() {
      const root = folderWith({ "package.json": "{}", "a.txt": "before" })
      const cacheDir = temp()
      const service = folders(undefined, cacheDir)
      const listed = yield* service.scan(root)
      fs.writeFileSync(path.join(root, "a.txt"), "after")
      const refused = yield* refusal(service.copyToCache(root, listed.digest))
      expect(refused).toMatchObject({ _tag: "DigestMismatch", expected: listed.digest, actual: (yield* service.scan(root)).digest })
      expect(fs.readdirSync(cacheDir)).toEqual([])
      // The user's files are untouched.
      expect(fs.readFileSync(path.join(root, "a.txt"), "utf8")).toBe("after")
    }))

  it.effect("a cache entry whose bytes were changed is not trusted: it is written again", () =>
    Effect.gen(function*() {
      const root = folderWith({ "package.json": "{}", "a.txt": "a" })
      const cacheDir = temp()
      const service = folders(undefined, cacheDir)
      const { digest } = yield* service.scan(root)
      const copied = yield* service.copyToCache(root, digest)
      fs.chmodSync(path.join(copied.path, "a.txt"), 0o644)
      fs.writeFileSync(path.join(copied.path, "a.txt"), "tampered")
      yield* service.copyToCache(root, digest)
      expect(fs.readFileSync(path.join(copied.path, "a.txt"), "utf8")).toBe("a")
    }))

  it.effect("a cache that cannot be written is unavailable, and the user's folder is untouched", () =>
    Effect.gen(function*() {
      const root = folderWith({ "package.json": "{}", "a.txt": "a" })
      const blocked = path.join(temp(), "not-a-folder")
      fs.writeFileSync(blocked, "a file where the cache should be")
      const service = folders(undefined, path.join(blocked, "cache"))
      const { digest } = yield* service.scan(root)
      expect(yield* refusal(service.copyToCache(root, digest))).toMatchObject({ _tag: "PackageCacheUnavailable" })
      expect(fs.readdirSync(root).sort()).toEqual(["a.txt", "package.json"])
    }))
})
