/**
 * Registry packages against a real HTTP stand-in serving real tarballs: honest ones packed from the example
 * packages, a tampered one, and every hostile kind, each refused with its reason and nothing written, in
 * the staging folder or anywhere around it.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as FsPackageFolders from "../../../layers/node/fs/FsPackageFolders.js"
import * as HttpRegistryPackages from "../../../layers/registry/HttpRegistryPackages.js"
import * as Unpack from "../../../layers/registry/Unpack.js"
import { TarballRefused } from "../../../services/node/PackageErrors.js"
import { RegistryPackages } from "../../../services/node/RegistryPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import { gzip, hostile, integrityOf, packFolder, rawTar } from "../../support/registry/Tarballs.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const examples = path.resolve(here, "../../../examples/packages")
const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "clark-registry-"))

const packages = (url: string | undefined, options: Omit<HttpRegistryPackages.Options, "registryUrl"> = {}) =>
  HttpRegistryPackages.make({ registryUrl: url === undefined ? Option.none() : Option.some(new URL(url)), ...options })

/** A staging folder to be, inside a parent of its own: the parent shows anything written beside it. */
const staging = () => {
  const parent = temp()
  return { parent, into: path.join(parent, "staging") }
}

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (outcome) => (Either.isLeft(outcome) ? outcome.left : "accepted"))

const scan = (root: string) => FsPackageFolders.make({ cacheDir: temp() }).scan(root)

const test = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scoped(name, () => body().pipe(Effect.provide(NodeHttpClient.layerUndici)), { timeout: 60_000 })

describe("a registry package", () => {
  for (const example of ["harbour-theme", "notes-service", "tide-widget"]) {
    test(`unpacks ${example} to the files it was packed from, integrity verified, nothing signed reported absent`, () =>
      Effect.gen(function*() {
        const registry = yield* Registry.start
        const source = path.join(examples, example)
        const tarball = yield* Effect.promise(() => packFolder(source))
        const name = `@clark-examples/${example}`
        registry.publish({ name, version: "1.0.0", tarball })
        const { into } = staging()
        const unpacked = yield* (yield* packages(registry.url)).unpack({ name, into })
        expect(unpacked).toEqual({
          folder: into, name, version: "1.0.0", integrity: integrityOf(tarball), signatures: "absent", provenance: "absent"
        })
        const [got, want] = [yield* scan(into), yield* scan(source)]
        expect(got.files).toEqual(want.files)
        expect(got.digest).toBe(want.digest)
        expect(fs.statSync(into).mode & 0o777).toBe(0o700)
        // The scoped name reached the registry escaped, as npm's client sends it.
        expect(registry.requests[0]).toBe(`/@clark-examples%2f${example}`)
      }))
  }

  test("is the version asked for, or the latest dist-tag when none is", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const older = yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme")))
      const newer = yield* Effect.promise(() => packFolder(path.join(examples, "tide-widget")))
      registry.publish({ name: "two-versions", version: "1.0.0", tarball: older })
      registry.publish({ name: "two-versions", version: "2.0.0", tarball: newer })
      registry.publish({ name: "two-versions", version: "3.0.0-beta.1", tarball: newer, latest: false })
      const service = yield* packages(registry.url)
      expect((yield* service.unpack({ name: "two-versions", into: staging().into })).version).toBe("2.0.0")
      const first = yield* service.unpack({ name: "two-versions", version: "1.0.0", into: staging().into })
      expect((yield* scan(first.folder)).digest).toBe((yield* scan(path.join(examples, "harbour-theme"))).digest)
    }))

  test("whose bytes were tampered with is refused before anything is unpacked", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const honest = yield* Effect.promise(() => packFolder(path.join(examples, "notes-service")))
      const tampered = Buffer.from(honest)
      tampered[tampered.length - 20] = tampered[tampered.length - 20]! ^ 0xff
      registry.publish({ name: "tampered", version: "1.0.0", tarball: tampered, integrity: integrityOf(honest) })
      const { parent, into } = staging()
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "tampered", into }))).toMatchObject({
        _tag: "IntegrityMismatch", name: "tampered", version: "1.0.0", expected: integrityOf(honest), actual: integrityOf(tampered)
      })
      expect(fs.readdirSync(parent)).toEqual([])
    }))

  test("without a sha512 integrity is refused", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme")))
      registry.publish({ name: "sha1-only", version: "1.0.0", tarball, integrity: "sha1-AAAA" })
      const { parent, into } = staging()
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "sha1-only", into }))).toMatchObject({
        _tag: "IntegrityMismatch", expected: "none"
      })
      expect(fs.readdirSync(parent)).toEqual([])
    }))
})

describe("a hostile tarball is refused with its reason, and nothing is written anywhere", () => {
  const marker = `escaped-${randomBytes(6).toString("hex")}`
  const absolute = path.join(os.tmpdir(), marker)
  const cases: ReadonlyArray<readonly [string, Buffer, object]> = [
    ["a symbolic link", hostile([{ path: "package/link", type: "SymbolicLink", linkpath: "/etc/passwd" }]), { reason: "link", path: "package/link" }],
    ["a hard link", hostile([{ path: "package/hard", type: "Link", linkpath: "package/package.json" }]), { reason: "link", path: "package/hard" }],
    ["a ../ path", hostile([{ path: `package/../../${marker}`, body: "out" }]), { reason: "path-escape" }],
    ["an absolute path", hostile([{ path: `${absolute}/owned.txt`, body: "out" }]), { reason: "path-escape" }],
    ["a character device", hostile([{ path: "package/null", type: "CharacterDevice" }]), { reason: "special-file", path: "package/null" }],
    ["a named pipe", hostile([{ path: "package/fifo", type: "FIFO" }]), { reason: "special-file" }],
    ["a decompression bomb (64 MiB of zeros)", gzip(rawTar([{ path: "package/zeros", zeros: 64 * 1024 * 1024 }])), { reason: "ratio", limit: 100 }],
    ["a file that is also a folder", hostile([{ path: "package/a", body: "1" }, { path: "package/a/b", body: "2" }]), { reason: "malformed" }],
    ["the same file twice", hostile([{ path: "package/a", body: "1" }, { path: "package/a", body: "2" }]), { reason: "malformed" }],
    ["bytes that are not a tarball", gzip(Buffer.from("not a tar archive at all, just text")), { reason: "malformed" }],
    ["bytes that are not gzip", Buffer.from("plain text"), { reason: "malformed" }],
    ["a tarball gzipped twice", gzip(gzip(rawTar([{ path: "package/package.json", body: "{}" }]))), { reason: "malformed" }]
  ]
  for (const [kind, tarball, expected] of cases) {
    test(kind, () =>
      Effect.gen(function*() {
        const registry = yield* Registry.start
        registry.publish({ name: "hostile", version: "6.6.6", tarball })
        const { parent, into } = staging()
        expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "hostile", into }))).toMatchObject({
          _tag: "TarballRefused", name: "hostile", version: "6.6.6", ...expected
        })
        expect(fs.readdirSync(parent)).toEqual([])
        expect(fs.existsSync(path.join(path.dirname(parent), marker))).toBe(false)
        expect(fs.existsSync(absolute)).toBe(false)
      }))
  }

  test("more than 64 MiB compressed, cut off while it streams", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.publish({ name: "huge", version: "1.0.0", tarball: randomBytes(64 * 1024 * 1024 + 1), chunked: true })
      const { parent, into } = staging()
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "huge", into }))).toMatchObject({
        _tag: "TarballRefused", reason: "too-large", limit: 64 * 1024 * 1024
      })
      expect(fs.readdirSync(parent)).toEqual([])
    }))

  test("over the limits of a package: bytes, files, folders and depth, read from the headers", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.publish({
        name: "big",
        version: "1.0.0",
        tarball: hostile([{ path: "package/a/1", body: "1111" }, { path: "package/a/b/c/2", body: "2222" }, { path: "package/d/3", body: "33" }])
      })
      const tries: ReadonlyArray<readonly [NonNullable<HttpRegistryPackages.Options["limits"]>, object]> = [
        [{ bytes: 20 }, { reason: "too-large", limit: 20 }],
        [{ files: 3 }, { reason: "too-many-files", limit: 3 }],
        [{ folders: 3 }, { reason: "too-many-folders", limit: 3 }],
        [{ depth: 3 }, { reason: "too-deep", path: "package/a/b/c/2", limit: 3 }],
        [{ tarballBytes: 100 }, { reason: "too-large", limit: 100 }]
      ]
      for (const [limits, expected] of tries) {
        const { parent, into } = staging()
        expect(yield* refusal((yield* packages(registry.url, { limits })).unpack({ name: "big", into }))).toMatchObject({
          _tag: "TarballRefused", ...expected
        })
        expect(fs.readdirSync(parent)).toEqual([])
      }
      // Exactly at each limit is allowed, as for a local folder.
      const at = yield* packages(registry.url, { limits: { bytes: 22, files: 4, folders: 4, depth: 4 } })
      const unpacked = yield* at.unpack({ name: "big", into: staging().into })
      expect((yield* scan(unpacked.folder)).files.map((file) => file.path)).toEqual(["a/1", "a/b/c/2", "d/3", "package.json"])
    }))
})

describe("tar's extraction alone, the second guard behind the listing pass", () => {
  const refuse = (reason: TarballRefused["reason"]) => new TarballRefused({ name: "x", version: "1", reason })
  it.effect("writes no link, device or escaping path even when handed them", () =>
    Effect.gen(function*() {
      const parent = temp()
      const into = path.join(parent, "staging")
      fs.mkdirSync(into)
      const marker = `escaped-${randomBytes(6).toString("hex")}`
      const entries = [
        { path: "package/package.json", body: "{}" },
        { path: "package/link", type: "SymbolicLink" as const, linkpath: "/etc/passwd" },
        { path: "package/hard", type: "Link" as const, linkpath: "package/package.json" },
        { path: "package/null", type: "CharacterDevice" as const },
        { path: `/tmp/${marker}`, body: "out" },
        { path: `package/../../${marker}`, body: "out" }
      ]
      yield* Unpack.extract(rawTar(entries), into, Unpack.defaultLimits, refuse)
      expect(fs.readdirSync(into)).toEqual(["package.json"])
      expect(fs.existsSync(`/tmp/${marker}`)).toBe(false)
      expect(fs.readdirSync(parent)).toEqual(["staging"])
      expect(fs.existsSync(path.join(path.dirname(parent), marker))).toBe(false)
    }))
})

describe("the registry itself", () => {
  test("down (connection refused) is unavailable, without its address in the error", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.map(Registry.start, (registry) => registry.url))
      const refused = yield* refusal((yield* packages(url)).unpack({ name: "anything", into: staging().into }))
      expect(refused).toMatchObject({ _tag: "RegistryUnavailable", name: "anything", stage: "packument" })
      expect(JSON.stringify(refused)).not.toContain("127.0.0.1")
    }))

  test("answering 404 for the name, or lacking the version, is a package not in the registry", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.publish({ name: "present", version: "1.0.0", tarball: yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme"))) })
      const service = yield* packages(registry.url)
      expect(yield* refusal(service.unpack({ name: "absent", into: staging().into }))).toMatchObject({ _tag: "PackageNotInRegistry", name: "absent" })
      expect(yield* refusal(service.unpack({ name: "present", version: "9.9.9", into: staging().into }))).toMatchObject({
        _tag: "PackageNotInRegistry", name: "present", version: "9.9.9"
      })
      // A name npm could never publish is not sent at all.
      expect(yield* refusal(service.unpack({ name: "../-/npm/v1/keys", into: staging().into }))).toMatchObject({ _tag: "PackageNotInRegistry" })
      expect(registry.requests).toEqual(["/absent", "/present"])
    }))

  test("answering 500 is unavailable with its status", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.route("/broken", 500, "oops")
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "broken", into: staging().into }))).toMatchObject({
        _tag: "RegistryUnavailable", stage: "packument", status: 500
      })
    }))

  test("naming a tarball on another host is refused before it is fetched", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const elsewhere = yield* Registry.start
      const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme")))
      elsewhere.publish({ name: "moved", version: "1.0.0", tarball })
      registry.route("/moved", 200, { name: "moved", "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": { name: "moved", version: "1.0.0", dist: { tarball: `${elsewhere.url}/moved/-/moved-1.0.0.tgz`, integrity: integrityOf(tarball) } } } })
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "moved", into: staging().into }))).toMatchObject({
        _tag: "RegistryUnavailable", stage: "tarball"
      })
      expect(elsewhere.requests).toEqual([])
    }))

  test("not configured: every request says which setting is missing; configured: the layer reads it", () =>
    Effect.gen(function*() {
      const unconfigured = HttpRegistryPackages.layer({}).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map()))))
      const outcome = yield* refusal(Effect.flatMap(RegistryPackages, (service) => service.unpack({ name: "x", into: staging().into })).pipe(Effect.provide(unconfigured)))
      expect(outcome).toMatchObject({ _tag: "RegistryNotConfigured", setting: "CC_REGISTRY_URL" })

      const registry = yield* Registry.start
      registry.publish({ name: "configured", version: "1.0.0", tarball: yield* Effect.promise(() => packFolder(path.join(examples, "harbour-theme"))) })
      const configured = HttpRegistryPackages.layer({}).pipe(
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["CC_REGISTRY_URL", registry.url]]))))
      )
      const unpacked = yield* Effect.flatMap(RegistryPackages, (service) => service.unpack({ name: "configured", into: staging().into })).pipe(Effect.provide(configured))
      expect(unpacked.version).toBe("1.0.0")

      const invalid = HttpRegistryPackages.layer({}).pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["CC_REGISTRY_URL", "ftp://example"]])))))
      expect(yield* refusal(Layer.build(invalid))).toMatchObject({ _op: "InvalidData" })
    }))
})
