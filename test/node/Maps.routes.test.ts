/**
 * What GET /map-tiles tells a page, the person-only map writes, the
 * execution.machineTurns preference, the tile route's bytes, headers and
 * refusals, and that the leak check sees the node's log lines.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import * as fs from "node:fs"
import { secretsFile } from "../../layers/node/fs/SecretBroker.js"
import { MapTiles } from "../../services/node/MapTiles.js"
import { TileKeyUnavailable, TileOutOfBounds, TilesRateLimited } from "../../services/node/TileErrors.js"
import { query } from "../support/NodeFixtures.js"
import { type As, TestNode } from "../support/NodeServer.js"
import {
  call,
  dataDir,
  expectError,
  expectNoLeak,
  keyed,
  logLines,
  origin,
  policy,
  provider,
  putKey,
  seen,
  setPolicy,
  storedRows,
  tiles,
  undo,
  withNode
} from "./MapsFixture.js"

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
