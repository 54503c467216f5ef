/**
 * The MapTiles layer against real loopback providers, on the TestClock:
 * policy and bounds, the provider key (where it goes and when it is missing),
 * the cache (hits, eviction by count and bytes, TTL, policy changes), the rate
 * limit and one fetch per tile at a time.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Redacted, TestClock } from "effect"
import type * as http from "node:http"
import { maxTileBytes } from "../../../schema/node/Maps.js"
import { cacheKey } from "../../../layers/node/tiles/TileCache.js"
import {
  answer,
  headerCredential,
  keyValue,
  makeWorld,
  png,
  pngBase,
  policyFor,
  queryCredential,
  type World
} from "./Fixtures.js"

/** Waits on real time (the fetch is I/O) until `condition` holds. */
const until = (condition: () => boolean) =>
  Effect.promise(
    () =>
      new Promise<void>((resolve) => {
        const check = () => (condition() ? resolve() : setTimeout(check, 2))
        check()
      })
  )

/** A handler that holds every answer until `release` is called. */
const gated = (then: (request: http.IncomingMessage, response: http.ServerResponse) => void) => {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    handler: (request: http.IncomingMessage, response: http.ServerResponse) => void gate.then(() => then(request, response)),
    release: () => release()
  }
}

/** Fetches `count` distinct tiles at zoom 9, refilling the rate limit as it goes (100 ms each). */
const fetchMany = (world: World, count: number, from = 0) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => from + i),
    (i) => TestClock.adjust(Duration.millis(100)).pipe(Effect.zipRight(world.tile(9, i % 512, Math.floor(i / 512)))),
    { discard: true }
  )

describe("MapTiles: policy and bounds", () => {
  it.scoped("no policy, or a null one, is 404 MAP_TILES_OFF and asks no provider", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(undefined)
      const absent = yield* Effect.flip(world.tile(0, 0, 0))
      expect([absent.code, absent.status]).toEqual(["MAP_TILES_OFF", 404])
      yield* world.setPolicy(null)
      // Checked before the key: a broken secret store does not matter when tiles are off.
      yield* world.failBroker("disk on fire")
      const off = yield* Effect.flip(world.tile(0, 0, 0))
      expect([off.code, off.status]).toEqual(["MAP_TILES_OFF", 404])
      expect(world.provider.received).toHaveLength(0)
    }))

  it.scoped("z above maxZoom, x or y off the grid is 400 MAP_TILE_OUT_OF_BOUNDS, saying which", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, { maxZoom: 5, ...headerCredential }))
      // Before the key too: nothing else is looked at for a tile that cannot exist.
      yield* world.setSecret(Option.none())
      const cases: Array<[number, number, number, RegExp]> = [
        [6, 0, 0, /zoom 6 .*0 to 5/],
        [-1, 0, 0, /zoom -1/],
        [1.5, 0, 0, /zoom 1\.5/],
        [3, 8, 0, /x 8 is off the grid at zoom 3 \(0 to 7\)/],
        [3, -1, 0, /x -1/],
        [3, 0, 8, /y 8 is off the grid at zoom 3/],
        [3, 0, 2.5, /y 2\.5/],
        [0, 1, 0, /x 1 is off the grid at zoom 0 \(0 to 0\)/],
        [2, Number.NaN, 0, /x NaN/]
      ]
      for (const [z, x, y, message] of cases) {
        const error = yield* Effect.flip(world.tile(z, x, y))
        expect([error.code, error.status]).toEqual(["MAP_TILE_OUT_OF_BOUNDS", 400])
        expect(error.message).toMatch(message)
      }
      expect(world.provider.received).toHaveLength(0)
      yield* world.setPolicy(policyFor(world.provider.origin, { maxZoom: 5 }))
      expect((yield* world.tile(0, 0, 0)).contentType).toBe("image/png")
      expect((yield* world.tile(5, 31, 31)).contentType).toBe("image/png")
      expect(world.provider.received.map((request) => request.url)).toEqual(["/tiles/0/0/0.png", "/tiles/5/31/31.png"])
    }))
})

describe("MapTiles: the provider key", () => {
  it.scoped("as a header: only the provider gets it, only in that header", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, headerCredential))
      yield* world.tile(2, 1, 3)
      const [request] = world.provider.received
      expect(request?.url).toBe("/tiles/2/1/3.png")
      expect(request?.headers["x-tile-key"]).toBe(keyValue)
      const others = Object.entries(request?.headers ?? {}).filter(([name]) => name !== "x-tile-key")
      expect(JSON.stringify(others)).not.toContain("SECRET")
      expect(world.elsewhere.received).toHaveLength(0)
    }))

  it.scoped("as a query parameter: appended to the template's query, URL-encoded, nowhere else", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(
        policyFor(world.provider.origin, { template: "/v1/{z}/{x}/{y}.png?style=day", ...queryCredential })
      )
      yield* world.tile(2, 1, 3)
      yield* world.setPolicy(policyFor(world.provider.origin, { template: "/v1/{z}/{y}/{x}", ...queryCredential }))
      yield* world.tile(2, 1, 3)
      const [withQuery, withoutQuery] = world.provider.received
      expect(withQuery?.url).toBe(`/v1/2/1/3.png?style=day&apikey=${encodeURIComponent(keyValue)}`)
      expect(withoutQuery?.url).toBe(`/v1/2/3/1?apikey=${encodeURIComponent(keyValue)}`)
      const query = new URL(withQuery?.url ?? "", "http://x").searchParams
      expect([query.get("style"), query.get("apikey")]).toEqual(["day", keyValue])
      for (const request of world.provider.received) expect(JSON.stringify(request.headers)).not.toContain("SECRET")
      expect(world.elsewhere.received).toHaveLength(0)
    }))

  it.scoped("a policy without credential sends no key, even when one is stored for its origin", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.tile(1, 1, 1)
      expect(JSON.stringify(world.provider.received)).not.toContain("SECRET")
    }))

  it.scoped("no key is 503 MAP_TILE_KEY_UNAVAILABLE offline key-unavailable", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, headerCredential))
      yield* world.setSecret(Option.none())
      const error = yield* Effect.flip(world.tile(1, 0, 0))
      expect([error.code, error.status, error.members]).toEqual([
        "MAP_TILE_KEY_UNAVAILABLE",
        503,
        { offline: "key-unavailable" }
      ])
      expect(world.provider.received).toHaveLength(0)
    }))

  it.scoped("a key bound to another origin (or to none) is offline key-origin-mismatch and goes nowhere", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, queryCredential))
      yield* world.setSecret(Option.some({ value: Redacted.make(keyValue), origin: world.elsewhere.origin }))
      const elsewhere = yield* Effect.flip(world.tile(1, 0, 0))
      expect([elsewhere.code, elsewhere.status, elsewhere.members]).toEqual([
        "MAP_TILE_KEY_UNAVAILABLE",
        503,
        { offline: "key-origin-mismatch" }
      ])
      yield* world.setSecret(Option.some({ value: Redacted.make(keyValue) }))
      const unbound = yield* Effect.flip(world.tile(1, 0, 0))
      expect(unbound.members).toEqual({ offline: "key-origin-mismatch" })
      expect(world.provider.received).toHaveLength(0)
      expect(world.elsewhere.received).toHaveLength(0)
    }))

  it.scoped("a failing secret store is 503 without an offline reason", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, headerCredential))
      yield* world.failBroker("secrets file is not readable")
      const error = yield* Effect.flip(world.tile(1, 0, 0))
      expect([error.code, error.status, error.members]).toEqual(["MAP_TILE_KEY_UNAVAILABLE", 503, {}])
      expect(world.provider.received).toHaveLength(0)
    }))

  it.scoped("a key that cannot be a header value is 502 MAP_TILE_FAILED; nothing is sent, the value is not told", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, headerCredential))
      const value = "SECRET\r\nx-injected: yes"
      yield* world.setSecret(Option.some({ value: Redacted.make(value), origin: world.provider.origin }))
      const error = yield* Effect.flip(world.tile(1, 0, 0))
      expect([error.code, error.status]).toEqual(["MAP_TILE_FAILED", 502])
      expect(JSON.stringify([error.message, error.members, world.logs])).not.toContain("SECRET")
      expect(world.provider.received).toHaveLength(0)
      // As a query parameter the same value is encoded and arrives intact.
      yield* world.setPolicy(policyFor(world.provider.origin, queryCredential))
      yield* world.tile(1, 0, 0)
      expect(new URL(world.provider.received[0]?.url ?? "", "http://x").searchParams.get("apikey")).toBe(value)
    }))

  it.scoped("the key is checked before the cache: a removed key stops cached tiles too", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.setPolicy(policyFor(world.provider.origin, headerCredential))
      yield* world.tile(1, 0, 0)
      yield* world.setSecret(Option.none())
      expect((yield* Effect.flip(world.tile(1, 0, 0))).members).toEqual({ offline: "key-unavailable" })
      expect(world.provider.received).toHaveLength(1)
    }))
})

describe("MapTiles: cache", () => {
  it.scoped("a second request is a hit: the provider is asked once", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const first = yield* world.tile(4, 2, 2)
      const second = yield* world.tile(4, 2, 2)
      expect(second.bytes).toEqual(first.bytes)
      expect(world.provider.received).toHaveLength(1)
      expect(world.cache.keys()).toEqual([`${world.provider.origin}/tiles/{z}/{x}/{y}.png#4/2/2`])
    }))

  it.scoped("holds at most 256 tiles: the 257th evicts the least recently used", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* fetchMany(world, 256)
      expect(world.cache.keys()).toHaveLength(256)
      // Tile 0 is used again, so tile 1 is now the least recently used.
      yield* world.tile(9, 0, 0)
      yield* fetchMany(world, 1, 256)
      expect(world.cache.keys()).toHaveLength(256)
      expect(world.provider.received).toHaveLength(257)
      yield* world.tile(9, 0, 0)
      expect(world.provider.received).toHaveLength(257)
      yield* world.tile(9, 1, 0)
      expect(world.provider.received).toHaveLength(258)
    }))

  it.scoped("holds at most 24 MiB: 48 tiles of 512 KiB fit, the 49th evicts the oldest", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const big = png(maxTileBytes)
      world.provider.handler = answer(big)
      yield* fetchMany(world, 48)
      expect(world.cache.bytes()).toBe(24 * 1024 * 1024)
      expect(world.cache.keys()).toHaveLength(48)
      yield* fetchMany(world, 1, 48)
      expect(world.cache.keys()).toHaveLength(48)
      expect(world.cache.bytes()).toBe(24 * 1024 * 1024)
      yield* world.tile(9, 48, 0)
      expect(world.provider.received).toHaveLength(49)
      yield* world.tile(9, 0, 0)
      expect(world.provider.received).toHaveLength(50)
    }))

  it.scoped("a tile expires one hour after it was fetched, on the clock", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* world.tile(3, 3, 3)
      yield* TestClock.adjust(Duration.minutes(59))
      yield* world.tile(3, 3, 3)
      expect(world.provider.received).toHaveLength(1)
      // Reading does not extend its life.
      yield* TestClock.adjust(Duration.sum(Duration.minutes(1), Duration.millis(1)))
      yield* world.tile(3, 3, 3)
      expect(world.provider.received).toHaveLength(2)
      yield* world.tile(3, 3, 3)
      expect(world.provider.received).toHaveLength(2)
    }))

  it.scoped("a policy change never serves the old provider's tiles", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      world.elsewhere.handler = answer(png(200, 7))
      yield* world.tile(2, 2, 2)
      yield* world.setPolicy(policyFor(world.provider.origin, { template: "/v2/{z}/{x}/{y}.png" }))
      yield* world.tile(2, 2, 2)
      expect(world.provider.received.map((request) => request.url)).toEqual(["/tiles/2/2/2.png", "/v2/2/2/2.png"])
      yield* world.setPolicy(policyFor(world.elsewhere.origin))
      const fromElsewhere = yield* world.tile(2, 2, 2)
      expect(fromElsewhere.bytes.length).toBe(200)
      expect(world.elsewhere.received.map((request) => request.url)).toEqual(["/tiles/2/2/2.png"])
      expect(world.cache.keys()).toHaveLength(3)
    }))

  it.scoped("cache keys are origin + template + z/x/y, whatever the key", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const policy = policyFor(world.provider.origin, queryCredential)
      yield* world.setPolicy(policy)
      yield* world.tile(1, 1, 0)
      yield* world.setSecret(Option.some({ value: Redacted.make("another-value"), origin: world.provider.origin }))
      yield* world.tile(1, 1, 0)
      expect(world.provider.received).toHaveLength(1)
      expect(world.cache.keys()).toEqual([cacheKey(policy, 1, 1, 0)])
    }))
})

describe("MapTiles: rate limit", () => {
  it.scoped("48 at once, then 429 with retryAfterSeconds; 12 more each second; refusals consume nothing", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      yield* Effect.forEach(Array.from({ length: 48 }, (_, i) => i), (i) => world.tile(6, i, 0), { discard: true })
      const refused = yield* Effect.flip(world.tile(6, 48, 0))
      expect([refused.code, refused.status]).toEqual(["MAP_TILES_RATE_LIMITED", 429])
      const retryAfter = refused.members.retryAfterSeconds
      expect(Number.isInteger(retryAfter) && (retryAfter as number) >= 1).toBe(true)
      for (let i = 0; i < 5; i++) expect(yield* world.codeOf(6, 48, 0)).toBe("MAP_TILES_RATE_LIMITED")
      expect(world.provider.received).toHaveLength(48)
      for (let second = 1; second <= 3; second++) {
        yield* TestClock.adjust(Duration.seconds(1))
        for (let i = 0; i < 12; i++) yield* world.tile(7, second * 12 + i, 0)
        expect(yield* world.codeOf(7, 0, 0)).toBe("MAP_TILES_RATE_LIMITED")
      }
      expect(world.provider.received).toHaveLength(48 + 36)
      // One twelfth of a second is one more tile.
      yield* TestClock.adjust(Duration.millis(84))
      expect(yield* world.codeOf(7, 100, 0)).toBe("OK")
      expect(yield* world.codeOf(7, 101, 0)).toBe("MAP_TILES_RATE_LIMITED")
      // The bucket holds 48 at most, however long it rests.
      yield* TestClock.adjust(Duration.hours(2))
      const codes = yield* Effect.forEach(Array.from({ length: 49 }, (_, i) => i), (i) => world.codeOf(8, i, 0))
      expect(codes.filter((code) => code === "OK")).toHaveLength(48)
      expect(codes[48]).toBe("MAP_TILES_RATE_LIMITED")
    }))

  it.scoped("cache hits and refusals before the fetch do not count: the limit protects the provider", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      for (let i = 0; i < 60; i++) expect(yield* world.codeOf(30, 0, 0)).toBe("MAP_TILE_OUT_OF_BOUNDS")
      yield* world.tile(1, 0, 0)
      for (let i = 0; i < 100; i++) yield* world.tile(1, 0, 0)
      yield* Effect.forEach(Array.from({ length: 47 }, (_, i) => i), (i) => world.tile(6, i, 1), { discard: true })
      expect(yield* world.codeOf(6, 0, 2)).toBe("MAP_TILES_RATE_LIMITED")
      // While limited, tiles already held are still answered.
      expect(yield* world.codeOf(1, 0, 0)).toBe("OK")
      expect(world.provider.received).toHaveLength(48)
    }))
})

describe("MapTiles: one fetch per tile", () => {
  it.scoped("concurrent requests for one tile share one fetch and one token", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const gate = gated(answer(pngBase))
      world.provider.handler = gate.handler
      const fibers = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.fork(world.tile(5, 5, 5)))
      yield* world.provider.waitFor(1)
      yield* Effect.yieldNow()
      gate.release()
      const tiles = yield* Fiber.joinAll(fibers)
      expect(tiles).toHaveLength(5)
      expect(world.provider.received).toHaveLength(1)
      world.provider.handler = answer(pngBase)
      const codes = yield* Effect.forEach(Array.from({ length: 48 }, (_, i) => i), (i) => world.codeOf(6, i, 9))
      expect(codes.filter((code) => code === "OK")).toHaveLength(47)
    }))

  it.scoped("a caller that goes away does not waste the fetch: the tile is cached", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const gate = gated(answer(pngBase))
      world.provider.handler = gate.handler
      const fiber = yield* Effect.fork(world.tile(5, 1, 1))
      yield* world.provider.waitFor(1)
      yield* Fiber.interrupt(fiber)
      gate.release()
      yield* until(() => world.cache.keys().length === 1)
      yield* world.tile(5, 1, 1)
      expect(world.provider.received).toHaveLength(1)
    }))
})
