/**
 * The map tile key over real HTTP with real files: stored bound to its origin
 * in the secrets file, never shown, kept across a restart, and the generic
 * credential route refusing its name.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { secretsFile } from "../../layers/node/fs/SecretBroker.js"
import { query } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"
import {
  call,
  dataDir,
  expectError,
  expectNoLeak,
  filesHolding,
  keyed,
  logLines,
  origin,
  provider,
  putKey,
  setPolicy,
  tileKey,
  tiles,
  withNode
} from "./MapsFixture.js"

// ---------------------------------------------------------------------------

describe("the map tile key", () => {
  it.scoped("is stored bound to its origin, never shown, and moves with a new origin", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: null })

      const stored = yield* putKey(origin)
      expect(stored.status).toBe(200)
      expect(stored.body).toEqual({ key: { origin } })
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: { origin } })
      expect((yield* call("GET", "/map-tiles/key", { as: "cli-api" })).body).toEqual({ key: { origin } })

      // The secrets file holds it, 0600 in the 0700 data dir; nothing else there does.
      const file = secretsFile(dir)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(filesHolding(dir, tileKey)).toEqual(["secrets.json"])
      expect(JSON.stringify(query(dir, "SELECT * FROM preferences"))).not.toContain(tileKey)

      // Re-entered for another origin: one key, bound there.
      const moved = yield* putKey("https://other.example.com", `${tileKey}-2`)
      expect(moved.body).toEqual({ key: { origin: "https://other.example.com" } })
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: { origin: "https://other.example.com" } })
      const onFile = JSON.parse(fs.readFileSync(file, "utf8"))
      expect(Object.keys(onFile.secrets)).toEqual(["maps:tiles"])
      expect(onFile.secrets["maps:tiles"]).toEqual({ value: `${tileKey}-2`, origin: "https://other.example.com" })

      const removed = yield* call("DELETE", "/map-tiles/key")
      expect(removed.body).toEqual({ removed: true })
      expect((yield* call("DELETE", "/map-tiles/key")).body).toEqual({ removed: false })
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: null })
      expect(filesHolding(dir, tileKey)).toEqual([])
      expectNoLeak()
    })))

  it.scoped("refuses a bad origin or value with 400 INVALID_INPUT, without quoting the value", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      for (const [what, body] of [
        ["http origin", { origin: "http://tiles.example.com", value: tileKey }],
        ["origin with a path", { origin: "https://tiles.example.com/x", value: tileKey }],
        ["value too long", { origin, value: tileKey.repeat(200) }],
        ["empty value", { origin, value: "" }],
        ["value not text", { origin, value: { nested: tileKey } }],
        ["no value", { origin }]
      ] as const) {
        expectError(yield* call("PUT", "/map-tiles/key", { body }), 400, "INVALID_INPUT", what)
      }
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: null })
      expectNoLeak()
    })))

  it.scoped("survives a restart of the node on the same data dir", () =>
    Effect.gen(function*() {
      const dir = NodeServer.makeDataDir()
      yield* withNode(Effect.gen(function*() {
        expect((yield* putKey(origin)).status).toBe(200)
        expect((yield* setPolicy(keyed)).status).toBe(200)
      }), { dataDir: dir })
      yield* withNode(Effect.gen(function*() {
        expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: { origin } })
        expect(yield* tiles()).toEqual({ provider })
        expectNoLeak()
      }), { dataDir: dir })
    }))

  for (const [what, damage] of [
    ["open to other users (0644)", (file: string) => fs.chmodSync(file, 0o644)],
    ["not parseable", (file: string) => fs.writeFileSync(file, `{"version":1,"secrets":{"maps:tiles":{"value":"${tileKey}`)]
  ] as const) {
    it.scoped(`in a secrets file ${what} makes the map offline (key-unavailable) and leaks nothing`, () =>
      withNode(Effect.gen(function*() {
        const dir = yield* dataDir
        yield* putKey(origin)
        yield* setPolicy(keyed)
        expect(yield* tiles()).toEqual({ provider })
        const file = secretsFile(dir)
        damage(file)
        const damaged = fs.readFileSync(file)

        expect(yield* tiles()).toEqual({ provider: null, offline: "key-unavailable" })
        expect(yield* tiles("cli-api")).toEqual({ provider: null, offline: "key-unavailable" })
        const read = yield* call("GET", "/map-tiles/key")
        expectError(read, 503, "MAP_TILE_KEY_UNAVAILABLE", "GET key")
        expect(read.body.offline).toBeUndefined()
        expectError(yield* putKey("https://other.example.com", "another"), 503, "MAP_TILE_KEY_UNAVAILABLE", "PUT key")
        expectError(yield* call("DELETE", "/map-tiles/key"), 503, "MAP_TILE_KEY_UNAVAILABLE", "DELETE key")
        // The file is left as it was for the person to look at.
        expect(fs.readFileSync(file).equals(damaged)).toBe(true)
        // The refusal was logged, with the reason but not the contents.
        expect(logLines.some((line) => line.includes("The map tile key cannot be read"))).toBe(true)
        expectNoLeak()
      })))
  }
})

// ---------------------------------------------------------------------------

describe("POST /credentials", () => {
  it.scoped("refuses the name maps:tiles in any case or spacing with 400 INVALID_INPUT, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      for (const name of ["maps:tiles", "MAPS:TILES ", " Maps:Tiles", "maps\uFF1Atiles"]) {
        for (const as of ["person", "cli-api"] as const) {
          const response = yield* call("POST", "/credentials", { body: { packageId: "weather", name, value: tileKey }, as })
          expectError(response, 400, "INVALID_INPUT", `${as} ${JSON.stringify(name)}`)
          expect(response.body.message).toContain("/map-tiles/key")
        }
      }
      expect(fs.existsSync(secretsFile(dir))).toBe(false)
      expect(filesHolding(dir, tileKey)).toEqual([])
      expect((yield* call("GET", "/map-tiles/key")).body).toEqual({ key: null })

      // Other names are package credentials: this package is not installed (test/node/credentials/).
      const other = yield* call("POST", "/credentials", { body: { packageId: "weather", name: "api-token", value: tileKey } })
      expectError(other, 404, "RESOURCE_NOT_FOUND")
      // A value too long is refused without quoting it.
      const long = yield* call("POST", "/credentials", {
        body: { packageId: "weather", name: "api-token", value: tileKey.repeat(500) }
      })
      expectError(long, 400, "INVALID_INPUT")
      expect(filesHolding(dir, tileKey)).toEqual([])
      expectNoLeak()
    })))
})
