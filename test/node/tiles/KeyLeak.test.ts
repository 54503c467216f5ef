/**
 * The provider key never leaves its one place: it reaches the provider only in
 * the header or query parameter the policy names, and never an error message,
 * an error member, a log line (all levels captured) or a cache key, across
 * successes and every kind of refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Redacted, TestClock } from "effect"
import { answer, headerCredential, html, keyValue, makeWorld, policyFor, pngBase, queryCredential, type World } from "./Fixtures.js"

const forms = [keyValue, encodeURIComponent(keyValue), "SECRET"]

const expectNoKey = (what: string, text: string) => {
  for (const form of forms) expect(text.includes(form), `${what} holds the key: ${text.slice(0, 300)}`).toBe(false)
}

/** Successes and refusals of every kind that can happen once the key has been read. */
const exercise = (world: World) =>
  Effect.gen(function*() {
    yield* world.tile(1, 0, 0)
    yield* world.tile(1, 0, 0)
    world.provider.handler = answer(html, { "content-type": "image/png" })
    yield* Effect.exit(world.tile(1, 1, 0))
    world.provider.handler = (_, response) => {
      response.writeHead(302, { location: `${world.elsewhere.origin}/steal` })
      response.end()
    }
    yield* Effect.exit(world.tile(1, 1, 1))
    world.provider.handler = answer(html, { "content-type": "text/html" }, 500)
    yield* Effect.exit(world.tile(2, 0, 0))
    world.provider.handler = answer(html, { "content-type": "text/html" }, 404)
    yield* Effect.exit(world.tile(2, 1, 0))
    world.provider.handler = () => {}
    const hanging = yield* Effect.fork(world.tile(2, 2, 0))
    yield* world.provider.waitFor(world.provider.received.length + 1)
    yield* TestClock.adjust(Duration.seconds(10))
    yield* Fiber.await(hanging)
    world.provider.handler = answer(pngBase)
    for (let i = 0; i < 50; i++) yield* Effect.exit(world.tile(6, i, 0))
    yield* Effect.exit(world.tile(30, 0, 0))
    yield* world.setSecret(Option.some({ value: Redacted.make(keyValue), origin: world.elsewhere.origin }))
    yield* Effect.exit(world.tile(1, 0, 1))
    yield* world.failBroker(`cannot read secrets`)
    yield* Effect.exit(world.tile(1, 0, 1))
  })

describe("MapTiles: the key never leaks", () => {
  for (const [mode, credential] of [["header", headerCredential], ["query", queryCredential]] as const) {
    it.scoped(`with the key as a ${mode}`, () =>
      Effect.gen(function*() {
        const world = yield* makeWorld()
        yield* world.setPolicy(policyFor(world.provider.origin, credential))
        yield* exercise(world)

        // Refusals of every kind happened, and none names the key.
        const codes = new Set(world.errors.map((error) => error.code))
        for (
          const code of [
            "MAP_TILE_REFUSED",
            "MAP_TILE_FAILED",
            "MAP_TILE_MISSING",
            "MAP_TILES_RATE_LIMITED",
            "MAP_TILE_OUT_OF_BOUNDS",
            "MAP_TILE_KEY_UNAVAILABLE"
          ]
        ) expect(codes).toContain(code)
        for (const error of world.errors) {
          expectNoKey("error", JSON.stringify({ message: error.message, members: error.members }))
          expectNoKey("error text", String(error))
        }
        expect(world.refusals.length).toBe(world.errors.length)
        for (const refusal of world.refusals) {
          expectNoKey("refusal", JSON.stringify(refusal))
          expectNoKey("refusal text", String(refusal))
        }

        // Logs at every level were written (fetches, refusals, the broker failure), none with the key.
        expect(world.logs.length).toBeGreaterThan(5)
        expect(world.logs.some((line) => line.includes("map tile fetch refused"))).toBe(true)
        expect(world.logs.some((line) => line.includes("map tile key could not be read"))).toBe(true)
        for (const line of world.logs) expectNoKey("log line", line)

        for (const key of world.cache.keys()) expectNoKey("cache key", key)
        expect(world.cache.keys().length).toBeGreaterThan(0)

        // The provider got the key in the named place of every request, and nowhere else.
        expect(world.provider.received.length).toBeGreaterThan(40)
        for (const request of world.provider.received) {
          const headers = { ...request.headers }
          if (mode === "header") {
            expect(headers["x-tile-key"]).toBe(keyValue)
            delete headers["x-tile-key"]
            expectNoKey("request URL", request.url)
          } else {
            const url = new URL(request.url, "http://x")
            expect(url.searchParams.getAll("apikey")).toEqual([keyValue])
            url.searchParams.delete("apikey")
            expectNoKey("request URL", url.pathname + url.search)
          }
          expectNoKey("request headers", JSON.stringify(headers))
        }
        expect(world.elsewhere.received).toHaveLength(0)
      }))
  }
})
