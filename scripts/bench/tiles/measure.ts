/**
 * The in-process parts of `npm run bench:tiles`: cache hits, provider fetches with the rate limit lifted, and
 * one caller at the shipped rate limit on the real clock, each timed call by call.
 */
import { Effect } from "effect"
import { performance } from "node:perf_hooks"
import { percentile } from "../Common.js"
import { buildTiles, policyFor, unlimited } from "./provider.js"
import { settings } from "./settings.js"

// ---------------------------------------------------------------------------
// Measurements

export interface Latencies {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly max: number
  readonly perSecond: number
}

export const summarise = (samples: Array<number>, wallMs: number): Latencies => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    count: samples.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: samples.reduce((sum, value) => sum + value, 0) / samples.length,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    perSecond: (samples.length / wallMs) * 1000
  }
}

/** Times each of `count` sequential calls (no other work in the process). */
export const timeEach = <E>(count: number, call: (i: number) => Effect.Effect<unknown, E>) =>
  Effect.gen(function*() {
    const samples = new Array<number>(count)
    const started = performance.now()
    for (let i = 0; i < count; i++) {
      const before = performance.now()
      yield* call(i)
      samples[i] = performance.now() - before
    }
    return summarise(samples, performance.now() - started)
  })

export const hotTile = (i: number) => [8, i % settings.hotTiles, 0] as const

export const cacheHits = (origin: string, credential: boolean) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, credential), origin, { rate: unlimited })
    for (let i = 0; i < settings.hotTiles; i++) yield* tiles.tile(...hotTile(i))
    // Warm-up: JIT, then measure.
    yield* timeEach(5_000, (i) => tiles.tile(...hotTile(i)))
    return yield* timeEach(settings.hits, (i) => tiles.tile(...hotTile(i)))
  }))

export const misses = (origin: string, requests: { count: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, true), origin, { rate: unlimited })
    yield* timeEach(100, (i) => tiles.tile(12, i, 1))
    const before = requests.count
    const result = yield* timeEach(settings.misses, (i) => tiles.tile(12, i, 2))
    if (requests.count - before !== settings.misses) throw new Error("a miss did not reach the provider")
    return result
  }))

export interface RateRun {
  readonly perSecond: Array<{ readonly served: number; readonly refused: number }>
  readonly providerRequests: number
  readonly retryAfter: Set<unknown>
}

export const atRateLimit = (origin: string, requests: { count: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, true), origin)
    const before = requests.count
    const perSecond = Array.from({ length: settings.seconds }, () => ({ served: 0, refused: 0 }))
    const retryAfter = new Set<unknown>()
    const started = performance.now()
    let next = 0
    for (;;) {
      const second = Math.floor((performance.now() - started) / 1000)
      if (second >= settings.seconds) break
      const outcome = yield* Effect.either(tiles.tile(14, next, 3))
      const bucket = perSecond[Math.min(second, settings.seconds - 1)]!
      if (outcome._tag === "Right") {
        bucket.served++
        next++
      } else if (outcome.left._tag === "TilesRateLimited") {
        bucket.refused++
        retryAfter.add(outcome.left.retryAfterSeconds)
        yield* Effect.sleep("5 millis")
      } else {
        throw new Error(`unexpected refusal ${outcome.left._tag}`)
      }
    }
    return { perSecond, providerRequests: requests.count - before, retryAfter } satisfies RateRun
  }))
