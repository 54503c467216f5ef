/**
 * A token bucket on `Clock` (so TestClock drives refills): `burst` tokens at
 * most, refilled continuously at `perSecond`. A refused take consumes nothing.
 */
import { Clock, Effect, Option, Ref } from "effect"

export interface Limits {
  readonly perSecond: number
  readonly burst: number
}

/** The spec's map tile limit: 12 a second with a burst of 48. */
export const tileLimits: Limits = { perSecond: 12, burst: 48 }

interface Bucket {
  readonly tokens: number
  readonly at: number
}

export interface TokenBucket {
  /** Takes one token; `Some(seconds)` (whole, at least 1) to wait before a token is there, when none is. */
  readonly take: Effect.Effect<Option.Option<number>>
}

export const make = (limits: Limits = tileLimits) =>
  Effect.gen(function*() {
    const bucket = yield* Ref.make<Bucket>({ tokens: limits.burst, at: yield* Clock.currentTimeMillis })
    const take = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.modify(bucket, (state): [Option.Option<number>, Bucket] => {
        // A clock that steps back refills nothing rather than draining the bucket.
        const tokens = Math.min(limits.burst, state.tokens + (Math.max(0, now - state.at) * limits.perSecond) / 1000)
        if (tokens >= 1) return [Option.none(), { tokens: tokens - 1, at: now }]
        const waitSeconds = (1 - tokens) / limits.perSecond
        return [Option.some(Math.max(1, Math.ceil(waitSeconds))), { tokens, at: now }]
      }))
    return { take } satisfies TokenBucket
  })
