/**
 * Map tile policy over real HTTP on the TestClock: every rule of
 * PUT /preferences/maps.tilePolicy at and past its boundary, its audit, and
 * the undo step with its 5-minute window.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { query } from "../support/NodeFixtures.js"
import {
  call,
  dataDir,
  expectError,
  expectNoLeak,
  origin,
  policy,
  provider,
  putKey,
  setPolicy,
  storedRows,
  templateOf,
  tileKey,
  tiles,
  undo,
  with_,
  withCredential,
  withNode
} from "./MapsFixture.js"

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
