/**
 * Map tiles over real HTTP on the TestClock, with real files in a temporary
 * data dir: every tile-policy rule at and past its boundary, the undo step
 * and its 5-minute window, the key routes and their secrets file, what GET
 * /map-tiles tells a page, the person-only writes, the generic credential
 * route refusing the map key, the tile route's bytes and headers, and that
 * the key never shows up in a response, an error or a log line.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, LogLevel, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { secretsFile } from "../../layers/node/fs/SecretBroker.js"
import { MapTiles } from "../../services/node/MapTiles.js"
import { TileKeyUnavailable, TileOutOfBounds, TilesRateLimited } from "../../services/node/TileErrors.js"
import { query } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"
import { type As, TestNode } from "../support/NodeServer.js"

// ---------------------------------------------------------------------------
// Recording: every response and log line of a test, for the leak checks

const tileKey = "tk-LEAKCHECK-5e1f0a9b3c7d"

const seen: Array<string> = []
const logLines: Array<string> = []

const captureLogs = Layer.merge(
  Logger.add(Logger.map(Logger.logfmtLogger, (line) => {
    logLines.push(line)
  })),
  Logger.minimumLogLevel(LogLevel.All)
)

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, options: Parameters<typeof NodeServer.layer>[0] = {}) =>
  Effect.suspend(() => {
    seen.length = 0
    logLines.length = 0
    return Effect.provide(effect, NodeServer.layer(options).pipe(Layer.provide(captureLogs)))
  })

const call = (
  method: string,
  route: string,
  options: { readonly body?: unknown; readonly as?: As } = {}
) =>
  Effect.flatMap(TestNode, (node) => node.request(method, route, options)).pipe(
    Effect.tap((response) =>
      Effect.sync(() => {
        seen.push(`${method} ${route} ${response.status} ${JSON.stringify([...response.headers.entries()])}`)
        seen.push(typeof response.body === "string" ? response.body : JSON.stringify(response.body))
      })
    )
  )

/** The key appears in no response, header, error or log line of the test so far. */
const expectNoLeak = () => {
  expect(seen.length).toBeGreaterThan(0)
  expect(logLines.length).toBeGreaterThan(0)
  expect(seen.filter((text) => text.includes(tileKey))).toEqual([])
  expect(logLines.filter((line) => line.includes(tileKey))).toEqual([])
}

// ---------------------------------------------------------------------------
// Helpers

const origin = "https://tiles.example.com"
const policy = {
  origin,
  template: "/styles/base/{z}/{x}/{y}.png?lang=en",
  attribution: "© Example Maps",
  maxZoom: 19
}
const keyed = { ...policy, credential: { secret: "maps:tiles", header: "X-Api-Key" } }
const provider = { origin: policy.origin, attribution: policy.attribution, maxZoom: policy.maxZoom }

const setPolicy = (value: unknown, as: As = "person") =>
  call("PUT", "/preferences/maps.tilePolicy", { body: { value }, as })
const undo = (as: As = "person") => call("POST", "/preferences/maps.tilePolicy/undo", { as })
const tiles = (as: As = "person") => Effect.map(call("GET", "/map-tiles", { as }), (r) => r.body)
const putKey = (keyOrigin: string, value = tileKey, as: As = "person") =>
  call("PUT", "/map-tiles/key", { body: { origin: keyOrigin, value }, as })

const expectError = (response: { readonly status: number; readonly body: any }, status: number, code: string, what = "") => {
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBe(status)
  expect(response.body, what).toMatchObject({ code, message: expect.any(String) })
}

const dataDir = Effect.map(TestNode, (node) => node.dataDir)

const storedRows = (dir: string) => ({
  preferences: query(dir, "SELECT * FROM preferences ORDER BY key"),
  undo: query(dir, "SELECT * FROM preference_undo ORDER BY key")
})

/** Every file of the data dir but the secrets file that holds the text (database, WAL, identity…). */
const filesHolding = (dir: string, text: string) =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => fs.readFileSync(file).includes(Buffer.from(text)))
    .map((file) => path.relative(dir, file))

const with_ = (change: Record<string, unknown>) => ({ ...policy, ...change })
const withCredential = (credential: unknown) => ({ ...policy, credential })

/** A template of exactly `length` characters. */
const templateOf = (length: number) => {
  const tail = "/{z}/{x}/{y}.png"
  return `/${"a".repeat(length - tail.length - 1)}${tail}`
}

// ---------------------------------------------------------------------------
// The tile-policy rules

const accepted: ReadonlyArray<readonly [string, unknown]> = [
  ["https origin", policy],
  ["https origin with a port", with_({ origin: "https://tiles.example.com:8443" })],
  ["http on 127.0.0.1", with_({ origin: "http://127.0.0.1:8080" })],
  ["http on another 127.x address", with_({ origin: "http://127.45.6.7" })],
  ["http on localhost", with_({ origin: "http://localhost:3000" })],
  ["http on [::1]", with_({ origin: "http://[::1]:8080" })],
  ["template of 300 characters", with_({ template: templateOf(300) })],
  ["template with every allowed character", with_({ template: "/a-b_c~d.e/{z}/{x}/{y}.png?style=x-y&v=1.2" })],
  ["placeholders in the query", with_({ template: "/tile?z={z}&x={x}&y={y}" })],
  ["a credential word in the path, not the query", with_({ template: "/key/token/{z}/{x}/{y}.png" })],
  ["a credential word as a query value", with_({ template: "/{z}/{x}/{y}.png?style=token" })],
  ["attribution of 200 characters", with_({ attribution: "a".repeat(200) })],
  ["maxZoom 19", with_({ maxZoom: 19 })],
  ["maxZoom 0", with_({ maxZoom: 0 })],
  ["credential as a header", withCredential({ secret: "maps:tiles", header: "X-Api-Key" })],
  ["credential as a query parameter (its name may say key)", withCredential({ secret: "maps:tiles", query: "apikey" })]
]

const refused: ReadonlyArray<readonly [string, unknown]> = [
  // origin: exactly scheme://host[:port]
  ["origin with a trailing slash", with_({ origin: "https://tiles.example.com/" })],
  ["origin with a path", with_({ origin: "https://tiles.example.com/tiles" })],
  ["origin with a query", with_({ origin: "https://tiles.example.com?x=1" })],
  ["origin with a fragment", with_({ origin: "https://tiles.example.com#x" })],
  ["origin in uppercase", with_({ origin: "https://Tiles.Example.com" })],
  ["origin with an uppercase scheme", with_({ origin: "HTTPS://tiles.example.com" })],
  ["origin with the default https port", with_({ origin: "https://tiles.example.com:443" })],
  ["origin with the default http port", with_({ origin: "http://127.0.0.1:80" })],
  ["origin with userinfo", with_({ origin: "https://user:secret@tiles.example.com" })],
  ["origin with a user only", with_({ origin: "https://user@tiles.example.com" })],
  ["origin without a scheme", with_({ origin: "tiles.example.com" })],
  ["origin of another scheme", with_({ origin: "ftp://tiles.example.com" })],
  ["empty origin", with_({ origin: "" })],
  // http only for loopback
  ["http on a public name", with_({ origin: "http://tiles.example.com" })],
  ["http on a private address", with_({ origin: "http://10.0.0.1" })],
  ["http on 128.0.0.1", with_({ origin: "http://128.0.0.1" })],
  ["http on a name starting with localhost", with_({ origin: "http://localhost.example.com" })],
  ["http on 0.0.0.0", with_({ origin: "http://0.0.0.0" })],
  ["http on a short loopback form", with_({ origin: "http://127.1" })],
  // template
  ["template of 301 characters", with_({ template: templateOf(301) })],
  ["template not starting with /", with_({ template: "tiles/{z}/{x}/{y}.png" })],
  ["template starting with a placeholder", with_({ template: "{z}/{x}/{y}.png" })],
  ["empty template", with_({ template: "" })],
  ...[" ", "%", "#", ":", "@", "+", "!", "$", ",", ";", "'", "\"", "\\", "*", "(", "é", "\n", "{", "}"].map(
    (character) => [`template with ${JSON.stringify(character)}`, with_({ template: `/a${character}b/{z}/{x}/{y}.png` })] as const
  ),
  ["template with another placeholder", with_({ template: "/{s}/{z}/{x}/{y}.png" })],
  ...["{z}", "{x}", "{y}"].flatMap((placeholder) => [
    [`template without ${placeholder}`, with_({ template: "/{z}/{x}/{y}.png".replace(placeholder, "0") })] as const,
    [`template with ${placeholder} twice`, with_({ template: `/{z}/{x}/{y}/${placeholder}.png` })] as const
  ]),
  ...["key", "token", "secret", "sig", "auth", "pass", "credential", "session"].flatMap((word) => [
    [`query parameter ${word}`, with_({ template: `/{z}/{x}/{y}.png?${word}=1` })] as const,
    [`query parameter containing ${word}`, with_({ template: `/{z}/{x}/{y}.png?api${word}s=1` })] as const,
    [`query parameter ${word.toUpperCase()}`, with_({ template: `/{z}/{x}/{y}.png?lang=en&X${word.toUpperCase()}=1` })] as const,
    [`query parameter ${word} without a value`, with_({ template: `/{z}/{x}/{y}.png?${word}` })] as const
  ]),
  ["query parameter apikey", with_({ template: "/{z}/{x}/{y}.png?apikey=1" })],
  ["query parameter access_token after another", with_({ template: "/{z}/{x}/{y}.png?style=a&access_token=1" })],
  // attribution
  ["attribution with \\n", with_({ attribution: "Example\nMaps" })],
  ["attribution with \\r", with_({ attribution: "Example\rMaps" })],
  ["attribution with \\u2028", with_({ attribution: "Example\u2028Maps" })],
  ["attribution with \\u2029", with_({ attribution: "Example\u2029Maps" })],
  ["attribution of 201 characters", with_({ attribution: "a".repeat(201) })],
  ["empty attribution", with_({ attribution: "" })],
  // maxZoom
  ["maxZoom 20", with_({ maxZoom: 20 })],
  ["maxZoom -1", with_({ maxZoom: -1 })],
  ["maxZoom 1.5", with_({ maxZoom: 1.5 })],
  ["maxZoom as text", with_({ maxZoom: "19" })],
  // credential
  ["credential with both header and query", withCredential({ secret: "maps:tiles", header: "X-Api-Key", query: "key" })],
  ["credential with neither header nor query", withCredential({ secret: "maps:tiles" })],
  ["credential naming another secret", withCredential({ secret: "pkg:weather/token", header: "X-Api-Key" })],
  ["credential naming MAPS:TILES", withCredential({ secret: "MAPS:TILES", header: "X-Api-Key" })],
  ["credential with an unknown field", withCredential({ secret: "maps:tiles", header: "X-Api-Key", value: "x" })],
  ["credential header that is no header name", withCredential({ secret: "maps:tiles", header: "X Api Key" })],
  // shape
  ["an unknown field", { ...policy, style: "dark" }],
  ["a missing field", { origin, template: policy.template, attribution: policy.attribution }],
  ["a string", "https://tiles.example.com/{z}/{x}/{y}.png"],
  ["a number", 42],
  ["a list", [policy]]
]

describe("PUT /preferences/maps.tilePolicy", () => {
  it.scoped("accepts every rule at its boundary and answers the stored state", () =>
    withNode(Effect.gen(function*() {
      for (const [what, value] of accepted) {
        const response = yield* setPolicy(value)
        expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBe(200)
        expect(response.body, what).toEqual({ key: "maps.tilePolicy", value, updatedAt: "1970-01-01T00:00:00.000Z" })
        const needsKey = (value as { credential?: unknown }).credential !== undefined
        expect(yield* tiles(), what).toEqual(
          needsKey ? { provider: null, offline: "key-unavailable" } : {
            provider: {
              origin: (value as typeof policy).origin,
              attribution: (value as typeof policy).attribution,
              maxZoom: (value as typeof policy).maxZoom
            }
          }
        )
      }
    })))

  it.scoped("refuses every rule past its boundary with 400 PREFERENCE_INVALID, nothing stored", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      expect((yield* setPolicy(policy)).status).toBe(200)
      yield* TestClock.adjust(Duration.seconds(1))
      const before = storedRows(dir)
      for (const [what, value] of refused) {
        const response = yield* setPolicy(value)
        expectError(response, 400, "PREFERENCE_INVALID", what)
        expect(response.body.key, what).toBe("maps.tilePolicy")
        expect(yield* tiles(), what).toEqual({ provider })
      }
      expect(storedRows(dir)).toEqual(before)
      // The undo step is still the one of the accepted write: back to no provider.
      const undone = yield* undo()
      expect(undone.body).toMatchObject({ undone: true, preference: { value: null } })
    })))

  it.scoped("audits who changed the tile policy and the key, with the origin at most", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      expect((yield* setPolicy(policy)).status).toBe(200)
      expect((yield* undo()).status).toBe(200)
      expect((yield* putKey(policy.origin)).status).toBe(200)
      expect((yield* call("DELETE", "/map-tiles/key", { as: "person" })).status).toBe(200)
      const entries = query(dir, "SELECT kind, surface, detail FROM audit_log WHERE kind LIKE 'maps.%' ORDER BY id")
      expect(entries.map((row: any) => [row.kind, row.surface])).toEqual([
        ["maps.tile-policy.set", "person"],
        ["maps.tile-policy.undo", "person"],
        ["maps.tile-key.set", "person"],
        ["maps.tile-key.remove", "person"]
      ])
      expect(JSON.stringify(entries)).toContain(policy.origin)
      expect(JSON.stringify(entries)).not.toContain(tileKey)
      expect(JSON.stringify(entries)).not.toContain(policy.template)
    })))

  it.scoped("never quotes a refused value back, since it may hold a pasted secret", () =>
    withNode(Effect.gen(function*() {
      const pasted = "pasted-secret-4f1c9e"
      for (const value of [
        { ...policy, template: `/{z}/{x}/{y}.png?apikey=${pasted}` },
        { ...policy, origin: pasted },
        { ...policy, attribution: `${pasted}\nsecond line` },
        pasted
      ]) {
        const response = yield* setPolicy(value)
        expect(response.status).toBe(400)
        expect(response.body.code).toBe("PREFERENCE_INVALID")
        expect(response.body.problem).toEqual(expect.any(String))
        expect(JSON.stringify(response.body)).not.toContain(pasted)
      }
    })))

  it.scoped("refuses a body without a value (nothing stored); null turns the tiles off", () =>
    withNode(Effect.gen(function*() {
      expect((yield* setPolicy(policy)).status).toBe(200)
      expectError(yield* call("PUT", "/preferences/maps.tilePolicy", { body: {} }), 400, "PREFERENCE_INVALID", "no value")
      expect(yield* tiles()).toEqual({ provider })

      yield* TestClock.adjust(Duration.seconds(30))
      const off = yield* setPolicy(null)
      expect(off.status).toBe(200)
      expect(off.body).toEqual({ key: "maps.tilePolicy", value: null, updatedAt: "1970-01-01T00:00:30.000Z" })
      expect(yield* tiles()).toEqual({ provider: null, offline: "no-provider" })
      expectNoLeak()
    })))
})

// ---------------------------------------------------------------------------

describe("POST /preferences/maps.tilePolicy/undo", () => {
  const other = { ...policy, origin: "https://other.example.com", attribution: "© Other" }

  it.scoped("with nothing ever written says nothing to undo", () =>
    withNode(Effect.gen(function*() {
      const response = yield* undo()
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        undone: false,
        reason: expect.stringContaining("nothing to undo"),
        preference: { key: "maps.tilePolicy", value: null, updatedAt: "1970-01-01T00:00:00.000Z" }
      })
      expect(yield* tiles()).toEqual({ provider: null, offline: "no-provider" })
    })))

  it.scoped("puts back the previous value once; a second undo has nothing to undo", () =>
    withNode(Effect.gen(function*() {
      yield* setPolicy(policy)
      yield* TestClock.adjust(Duration.minutes(1))
      yield* setPolicy(other)
      yield* TestClock.adjust(Duration.minutes(1))
      expect((yield* tiles()).provider.origin).toBe(other.origin)

      const first = yield* undo()
      expect(first.body).toEqual({
        undone: true,
        preference: { key: "maps.tilePolicy", value: policy, updatedAt: "1970-01-01T00:02:00.000Z" }
      })
      expect(yield* tiles()).toEqual({ provider })

      // An undo is not undoable: the policy stays.
      const second = yield* undo()
      expect(second.body).toEqual({
        undone: false,
        reason: expect.stringContaining("nothing to undo"),
        preference: first.body.preference
      })
      expect(yield* tiles()).toEqual({ provider })
    })))

  it.scoped("undoing the first write turns the tiles off again", () =>
    withNode(Effect.gen(function*() {
      yield* setPolicy(policy)
      const response = yield* undo()
      expect(response.body).toMatchObject({ undone: true, preference: { value: null } })
      expect(yield* tiles()).toEqual({ provider: null, offline: "no-provider" })
    })))

  it.scoped("works up to 5 minutes after the write, not past them", () =>
    withNode(Effect.gen(function*() {
      yield* setPolicy(policy)
      yield* setPolicy(other)
      yield* TestClock.adjust(Duration.minutes(5))
      expect((yield* undo()).body).toMatchObject({ undone: true, preference: { value: policy } })

      yield* setPolicy(other)
      yield* TestClock.adjust(Duration.sum(Duration.minutes(5), Duration.millis(1)))
      const late = yield* undo()
      expect(late.status).toBe(200)
      expect(late.body).toEqual({
        undone: false,
        reason: "the last change is older than 5 minutes",
        preference: { key: "maps.tilePolicy", value: other, updatedAt: "1970-01-01T00:05:00.000Z" }
      })
      expect((yield* tiles()).provider.origin).toBe(other.origin)
      // A new write opens a new window.
      yield* setPolicy(null)
      expect((yield* undo()).body).toMatchObject({ undone: true, preference: { value: other } })
    })))
})

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

describe("GET /map-tiles", () => {
  it.scoped("tells the page why the map is offline, or the provider without template or key", () =>
    withNode(Effect.gen(function*() {
      expect(yield* tiles()).toEqual({ provider: null, offline: "no-provider" })

      // No credential needed: shown, whatever key is stored.
      yield* setPolicy(policy)
      expect(yield* tiles()).toEqual({ provider })
      yield* putKey("https://other.example.com")
      expect(yield* tiles()).toEqual({ provider })

      // A credential: the key must be stored and bound to the policy's origin.
      yield* setPolicy(keyed)
      expect(yield* tiles()).toEqual({ provider: null, offline: "key-origin-mismatch" })
      yield* putKey(origin)
      expect(yield* tiles()).toEqual({ provider })
      expect(yield* tiles("cli-api")).toEqual({ provider })
      yield* call("DELETE", "/map-tiles/key")
      expect(yield* tiles()).toEqual({ provider: null, offline: "key-unavailable" })
      yield* putKey(origin)
      expect(yield* tiles()).toEqual({ provider })

      // What GET /map-tiles said, headers included: never the template or how the key is sent.
      const answers = seen.filter((_, i) => i > 0 && seen[i - 1]!.startsWith("GET /map-tiles ")).join("\n")
      expect(answers).toContain("provider")
      expect(answers).not.toContain("styles/base")
      expect(answers).not.toContain("lang=en")
      expect(answers).not.toContain("X-Api-Key")
      expectNoLeak()
    })))
})

// ---------------------------------------------------------------------------

describe("person-only map routes", () => {
  it.scoped("refuse the cli-api surface with 403 PERSON_ONLY and change nothing; reads work for it", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      yield* setPolicy(policy)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* setPolicy(keyed)
      yield* putKey(origin)
      const rows = storedRows(dir)
      const file = fs.readFileSync(secretsFile(dir))

      for (const [what, response] of [
        ["set policy", yield* setPolicy(null, "cli-api")],
        ["undo", yield* undo("cli-api")],
        ["set key", yield* putKey("https://other.example.com", "other", "cli-api")],
        ["remove key", yield* call("DELETE", "/map-tiles/key", { as: "cli-api" })]
      ] as const) {
        expectError(response, 403, "PERSON_ONLY", what)
      }
      expect(storedRows(dir)).toEqual(rows)
      expect(fs.readFileSync(secretsFile(dir)).equals(file)).toBe(true)

      expect(yield* tiles("cli-api")).toEqual({ provider })
      expect((yield* call("GET", "/map-tiles/key", { as: "cli-api" })).body).toEqual({ key: { origin } })
      // The person's undo still has its step.
      expect((yield* undo()).body).toMatchObject({ undone: true, preference: { value: policy } })
      expectNoLeak()
    })))
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

// ---------------------------------------------------------------------------

describe("PUT /preferences/execution.machineTurns", () => {
  it.scoped("stores ask or default for any token holder; anything else is 400 PREFERENCE_INVALID", () =>
    withNode(Effect.gen(function*() {
      const dir = yield* dataDir
      const asked = yield* call("PUT", "/preferences/execution.machineTurns", { body: { value: "ask" }, as: "cli-api" })
      expect(asked.status).toBe(200)
      expect(asked.body).toEqual({ key: "execution.machineTurns", value: "ask", updatedAt: "1970-01-01T00:00:00.000Z" })
      for (const value of ["sometimes", "ASK", null, 1]) {
        expectError(
          yield* call("PUT", "/preferences/execution.machineTurns", { body: { value } }),
          400,
          "PREFERENCE_INVALID",
          JSON.stringify(value)
        )
      }
      expect(query(dir, "SELECT key, value FROM preferences")).toEqual([{ key: "execution.machineTurns", value: "\"ask\"" }])
    })))
})

// ---------------------------------------------------------------------------

describe("GET /map-tiles/{z}/{x}/{y}", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3])
  const webp = new Uint8Array([0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x45, 0x42, 0x50])

  /** A tile fetcher answering by zoom, so each outcome can be seen through the route. */
  const stubTiles = Layer.succeed(MapTiles, MapTiles.of({
    tile: (z) => {
      switch (z) {
        case 1:
          return Effect.succeed({ contentType: "image/png", bytes: png })
        case 2:
          return Effect.succeed({ contentType: "image/webp", bytes: webp })
        case 3:
          return Effect.fail(new TilesRateLimited({ retryAfterSeconds: 1.2, perSecond: 12, burst: 48 }))
        case 4:
          return Effect.fail(new TileKeyUnavailable({ offline: "key-unavailable" }))
        default:
          return Effect.fail(new TileOutOfBounds({ z, x: 0, y: 0, maxZoom: 4 }))
      }
    }
  }))

  it.scoped("answers the tile's bytes with its own type and nosniff; refusals in the node's envelope", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const raw = (p: string, as: As = "cli-api") =>
        Effect.promise(async () => {
          const response = await fetch(`${node.baseUrl}${p}`, { headers: node.headers(as) })
          return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
        })

      for (const [z, type, bytes] of [[1, "image/png", png], [2, "image/webp", webp]] as const) {
        const response = yield* raw(`/map-tiles/${z}/0/0`)
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toBe(type)
        expect(response.headers.get("x-content-type-options")).toBe("nosniff")
        expect([...response.bytes]).toEqual([...bytes])
      }

      const limited = yield* call("GET", "/map-tiles/3/0/0")
      expect(limited.status).toBe(429)
      // Retry-After is whole seconds, rounded up; the body keeps the exact figure.
      expect(limited.headers.get("retry-after")).toBe("2")
      expect(limited.body).toEqual({
        code: "MAP_TILES_RATE_LIMITED",
        message: "Map tiles are limited to 12 a second (burst 48); retry after 1.2 s",
        retryAfterSeconds: 1.2
      })

      const keyless = yield* call("GET", "/map-tiles/4/0/0")
      expect(keyless.status).toBe(503)
      expect(keyless.body).toEqual({
        code: "MAP_TILE_KEY_UNAVAILABLE",
        message: "The tile provider needs a key and none is stored",
        offline: "key-unavailable"
      })
      expect(keyless.headers.get("retry-after")).toBeNull()

      const outside = yield* call("GET", "/map-tiles/5/0/0")
      expectError(outside, 400, "MAP_TILE_OUT_OF_BOUNDS")
      expect(outside.body).toMatchObject({ message: "Tile out of bounds: zoom 5 is not a whole number from 0 to 4", z: 5, maxZoom: 4 })
      expectError(yield* call("GET", "/map-tiles/1/0/x"), 400, "INVALID_INPUT")
      expectError(yield* call("GET", "/map-tiles/1/0/0", { as: "none" }), 401, "UNAUTHENTICATED")
    }), { mapTiles: stubTiles }))

  it.scoped("with the node's own fetcher and no policy is 404 MAP_TILES_OFF", () =>
    withNode(Effect.gen(function*() {
      expectError(yield* call("GET", "/map-tiles/1/0/0"), 404, "MAP_TILES_OFF")
    })))
})

// ---------------------------------------------------------------------------

describe("the leak check itself", () => {
  it.scoped("captures the node's log lines", () =>
    withNode(Effect.gen(function*() {
      yield* tiles()
      expect(logLines.some((line) => line.includes("Listening on"))).toBe(true)
    })))
})
