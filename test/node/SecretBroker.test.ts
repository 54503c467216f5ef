/**
 * The file secret broker on a real data dir: 0600 file in a 0700 dir, values
 * only as Redacted, what it does with a file opened up to others, damaged or
 * replaced by a link (refuses, never repairs, never quotes the contents),
 * writes one at a time, and a new broker on the same dir reading what the
 * last one acknowledged.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FileSecretBroker from "../../layers/node/fs/SecretBroker.js"
import { SecretBroker } from "../../services/node/SecretBroker.js"
import { makeDataDir } from "../support/NodeServer.js"

const key = "sk-broker-7f3a9c1e5b2d"

const broker = (dataDir: string) => Effect.provide(SecretBroker, FileSecretBroker.layer(dataDir))

const modeOf = (file: string) => fs.statSync(file).mode & 0o777

const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (result) => {
    if (Either.isRight(result)) throw new Error(`expected a failure, got ${String(result.right)}`)
    return result.left
  })

describe("the file secret broker", () => {
  it.effect("stores a value as Redacted with its origin in a 0600 file of a 0700 dir", () =>
    Effect.gen(function*() {
      const dataDir = path.join(makeDataDir(), "nested")
      const secrets = yield* broker(dataDir)
      expect(yield* secrets.get("maps:tiles")).toEqual(Option.none())
      expect(fs.existsSync(FileSecretBroker.secretsFile(dataDir))).toBe(false)

      yield* secrets.put("maps:tiles", { value: Redacted.make(key), origin: "https://tiles.example.com" })
      const stored = Option.getOrThrow(yield* secrets.get("maps:tiles"))
      expect(Redacted.isRedacted(stored.value)).toBe(true)
      expect(Redacted.value(stored.value)).toBe(key)
      expect(stored.origin).toBe("https://tiles.example.com")
      // Printing it never shows the value.
      expect(String(stored.value)).not.toContain(key)
      expect(JSON.stringify(stored)).not.toContain(key)

      const file = FileSecretBroker.secretsFile(dataDir)
      expect(modeOf(file)).toBe(0o600)
      expect(modeOf(dataDir)).toBe(0o700)
      expect(fs.readFileSync(file, "utf8")).toContain(key)
      // No temporary file is left beside it.
      expect(fs.readdirSync(dataDir)).toEqual(["secrets.json"])
    }))

  it.effect("replaces a secret, keeps the others, removes once", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const secrets = yield* broker(dataDir)
      yield* secrets.put("maps:tiles", { value: Redacted.make(key), origin: "https://a.example.com" })
      yield* secrets.put("pkg:weather/token", { value: Redacted.make("other-value") })
      yield* secrets.put("maps:tiles", { value: Redacted.make(`${key}-2`), origin: "https://b.example.com" })

      const tiles = Option.getOrThrow(yield* secrets.get("maps:tiles"))
      expect([Redacted.value(tiles.value), tiles.origin]).toEqual([`${key}-2`, "https://b.example.com"])
      const other = Option.getOrThrow(yield* secrets.get("pkg:weather/token"))
      expect(Redacted.value(other.value)).toBe("other-value")
      expect(other.origin).toBeUndefined()

      expect(yield* secrets.remove("maps:tiles")).toBe(true)
      expect(yield* secrets.remove("maps:tiles")).toBe(false)
      expect(yield* secrets.get("maps:tiles")).toEqual(Option.none())
      expect(Option.isSome(yield* secrets.get("pkg:weather/token"))).toBe(true)
      expect(fs.readFileSync(FileSecretBroker.secretsFile(dataDir), "utf8")).not.toContain(key)
      // Names of the object prototype are not secrets.
      expect(yield* secrets.get("constructor")).toEqual(Option.none())
      expect(yield* secrets.remove("toString")).toBe(false)
    }))

  it.effect("lists the secrets under a prefix, in name order, as Redacted", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const secrets = yield* broker(dataDir)
      expect(yield* secrets.list("package:")).toEqual([])
      yield* secrets.put("maps:tiles", { value: Redacted.make(key), origin: "https://a.example.com" })
      yield* secrets.put("package:weather:token", { value: Redacted.make("weather-token") })
      yield* secrets.put("package:weather-pro:token", { value: Redacted.make("pro-token") })
      yield* secrets.put("package:weather:region", { value: Redacted.make("eu") })
      const listed = yield* secrets.list("package:weather:")
      expect(listed.map((entry) => entry.name)).toEqual(["package:weather:region", "package:weather:token"])
      expect(listed.map((entry) => Redacted.value(entry.secret.value))).toEqual(["eu", "weather-token"])
      expect(listed.every((entry) => Redacted.isRedacted(entry.secret.value))).toBe(true)
      expect((yield* secrets.list("")).map((entry) => entry.name)).toEqual([
        "maps:tiles",
        "package:weather-pro:token",
        "package:weather:region",
        "package:weather:token"
      ])
      expect((yield* secrets.list("maps:")).map((entry) => entry.secret.origin)).toEqual(["https://a.example.com"])
    }))

  it.effect("a new broker on the same dir reads what the last one acknowledged", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      yield* Effect.flatMap(broker(dataDir), (secrets) =>
        secrets.put("maps:tiles", { value: Redacted.make(key), origin: "https://tiles.example.com" }))
      const again = yield* broker(dataDir)
      const stored = Option.getOrThrow(yield* again.get("maps:tiles"))
      expect([Redacted.value(stored.value), stored.origin]).toEqual([key, "https://tiles.example.com"])
    }))

  it.effect("concurrent writes are serialized: none is lost", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const secrets = yield* broker(dataDir)
      const names = Array.from({ length: 20 }, (_, i) => `pkg:p${i}/token`)
      yield* Effect.forEach(names, (name) => secrets.put(name, { value: Redacted.make(`v-${name}`) }), {
        concurrency: "unbounded"
      })
      for (const name of names) {
        expect(Redacted.value(Option.getOrThrow(yield* secrets.get(name)).value)).toBe(`v-${name}`)
      }
    }))

  it.effect("removes a temporary file a crash left behind", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const stale = path.join(dataDir, ".secrets.json.abcdef123456.tmp")
      fs.writeFileSync(stale, "{\"half\":", { mode: 0o600 })
      yield* broker(dataDir)
      expect(fs.existsSync(stale)).toBe(false)
    }))

  const refusals: ReadonlyArray<readonly [string, (file: string) => void, RegExp]> = [
    ["mode 0644", (file) => fs.chmodSync(file, 0o644), /open to other users \(mode 0644/],
    ["mode 0640", (file) => fs.chmodSync(file, 0o640), /open to other users/],
    ["mode 0602", (file) => fs.chmodSync(file, 0o602), /open to other users/],
    [
      "garbage",
      (file) => fs.writeFileSync(file, `{"version":1,"secrets":{"maps:tiles":{"value":"${key}-garbage"`, { mode: 0o600 }),
      /cannot be parsed/
    ],
    [
      "another shape",
      (file) => fs.writeFileSync(file, JSON.stringify({ version: 2, secrets: { x: `${key}-shape` } }), { mode: 0o600 }),
      /cannot be parsed/
    ],
    ["a directory", (file) => {
      fs.rmSync(file)
      fs.mkdirSync(file, { mode: 0o700 })
    }, /not a regular file/],
    ["a symbolic link", (file) => {
      const elsewhere = path.join(makeDataDir(), "elsewhere.json")
      fs.renameSync(file, elsewhere)
      fs.symlinkSync(elsewhere, file)
    }, /not a regular file/]
  ]

  for (const [what, damage, reason] of refusals) {
    it.effect(`refuses a secrets file that is ${what}, without quoting it and without repairing it`, () =>
      Effect.gen(function*() {
        const dataDir = makeDataDir()
        const secrets = yield* broker(dataDir)
        yield* secrets.put("maps:tiles", { value: Redacted.make(key), origin: "https://tiles.example.com" })
        const file = FileSecretBroker.secretsFile(dataDir)
        damage(file)
        const before = fs.lstatSync(file)

        const failures = [
          yield* failureOf(secrets.get("maps:tiles")),
          yield* failureOf(secrets.put("maps:tiles", { value: Redacted.make("new-value"), origin: "https://x.example.com" })),
          yield* failureOf(secrets.remove("maps:tiles"))
        ]
        for (const failure of failures) {
          expect(failure._tag).toBe("SecretStoreUnavailable")
          expect(failure.reason).toMatch(reason)
          expect(failure.reason).not.toContain(key)
          expect(JSON.stringify(failure)).not.toContain(key)
        }
        // Left as found: not overwritten, not chmod-ed.
        const after = fs.lstatSync(file)
        expect([after.mode, after.mtimeMs, after.size]).toEqual([before.mode, before.mtimeMs, before.size])
        // A new broker on the dir starts (the node keeps running) and refuses the same way.
        const again = yield* broker(dataDir)
        expect((yield* failureOf(again.get("maps:tiles"))).reason).toMatch(reason)
      }))
  }
})
