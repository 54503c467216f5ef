/**
 * Rate limiting for the marketplace: `@effect/experimental`'s RateLimiter over
 * a store. On PostgreSQL the store is the tables of migration 0007, so every
 * replica spends from one budget per key; each check is one upsert, atomic
 * under the row lock, whatever the number of replicas. On SQLite the server is
 * one process and counts in memory: a write per public read would queue every
 * read behind the database's single writer.
 */
import { RateLimiter } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { type RateLimitSettings, ReplayCheck } from "../../../services/marketplace/RateLimits.js"

const storeError = (error: SqlError) =>
  new RateLimiter.RateLimitStoreError({ message: "The rate-limit store failed", cause: error })

/** A boolean column: PostgreSQL returns booleans, SQLite 0 or 1. */
const Flag = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Literal(0, 1), Schema.Boolean, { decode: (n) => n === 1, encode: (b) => (b ? 1 : 0) })
)
const CounterRow = Schema.Struct({ count: Schema.Number, expiresAt: Schema.Number, refused: Flag })
const BucketRow = Schema.Struct({ tokens: Schema.Number, refused: Flag })

/** The one row an upsert returns, decoded. */
const single = <A, I>(schema: Schema.Schema<A, I>) => (rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(schema)(rows[0]).pipe(
    Effect.mapError((error) => new RateLimiter.RateLimitStoreError({ message: "Unexpected rate-limit row", cause: error }))
  )

/**
 * The store on SQL, with the memory store's semantics (the library's
 * `layerStoreMemory`, checked side by side in the store tests). A refusal
 * leaves the counts as they were; the `refused` column says which way the
 * statement went, since RETURNING shows only the new row.
 */
export const makeStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Some parameters are cast: PostgreSQL cannot type `$1 + $2` or a lone NULL on its own.
  const real = (value: number) => sql`CAST(${value} AS DOUBLE PRECISION)`
  const integer = (value: number | null) => sql`CAST(${value} AS INTEGER)`

  const fixedWindow: RateLimiter.RateLimiterStore["Type"]["fixedWindow"] = (options) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const refill = Duration.toMillis(options.refillRate)
      const { limit, tokens } = options
      const fits = limit === undefined || tokens <= limit
      // The inserted row is a fresh window, which is also what an expired one becomes: `excluded`.
      // Otherwise the window refuses when the tokens do not fit (never without a limit: `> NULL` is not true).
      const expired = sql`rate_limit_counters.expires_at <= ${now}`
      const over = sql`rate_limit_counters.count + ${tokens} > ${integer(limit ?? null)}`
      const row = yield* sql`INSERT INTO rate_limit_counters (key, count, expires_at, refused)
        VALUES (${options.key}, ${fits ? tokens : 0}, ${now + (fits ? refill * tokens : 0)}, ${
        sql.literal(fits ? "FALSE" : "TRUE")
      })
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN ${expired} THEN excluded.count WHEN ${over} THEN rate_limit_counters.count
            ELSE rate_limit_counters.count + ${tokens} END,
          expires_at = CASE WHEN ${expired} THEN excluded.expires_at WHEN ${over} THEN rate_limit_counters.expires_at
            ELSE rate_limit_counters.expires_at + ${refill * tokens} END,
          refused = CASE WHEN ${expired} THEN excluded.refused ELSE COALESCE(${over}, FALSE) END
        RETURNING count, expires_at, refused`.pipe(Effect.mapError(storeError), Effect.flatMap(single(CounterRow)))
      return [row.refused ? row.count + tokens : row.count, row.expiresAt - now] as const
    })

  const tokenBucket: RateLimiter.RateLimiterStore["Type"]["tokenBucket"] = (options) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const refill = Duration.toMillis(options.refillRate)
      const { allowOverflow, limit, tokens } = options
      // Whole refill steps since the last one; the remainder carries over in last_refill.
      const elapsed = sql`(${real(now)} - rate_limit_buckets.last_refill) / ${real(refill)}`
      // PostgreSQL's CAST rounds; SQLite's truncates, which is the floor of a positive number.
      const steps = sql.onDialectOrElse({
        pg: () => sql`FLOOR(${elapsed})`,
        orElse: () => sql`CAST(${elapsed} AS INTEGER)`
      })
      const added = sql`CASE WHEN ${steps} > 0 THEN ${steps} ELSE 0 END`
      const refilled = sql`CASE WHEN rate_limit_buckets.tokens + ${added} > ${integer(limit)} THEN ${integer(limit)}
        ELSE rate_limit_buckets.tokens + ${added} END`
      const refuse = allowOverflow ? sql`FALSE` : sql`(${refilled} - ${integer(tokens)} < 0)`
      const lastRefill = sql`rate_limit_buckets.last_refill + ${added} * ${real(refill)}`
      const after = sql`CASE WHEN ${refuse} THEN ${refilled} ELSE ${refilled} - ${integer(tokens)} END`
      const fresh = limit - tokens
      const freshRefused = !allowOverflow && fresh < 0
      const row = yield* sql`INSERT INTO rate_limit_buckets (key, tokens, last_refill, full_at, refused)
        VALUES (${options.key}, ${freshRefused ? limit : fresh}, ${real(now)}, ${
        real(now + (freshRefused ? 0 : tokens * refill))
      }, ${freshRefused ? sql.literal("TRUE") : sql.literal("FALSE")})
        ON CONFLICT (key) DO UPDATE SET
          tokens = ${after},
          last_refill = ${lastRefill},
          full_at = ${lastRefill} + (${integer(limit)} - ${after}) * ${real(refill)},
          refused = ${refuse}
        RETURNING tokens, refused`.pipe(Effect.mapError(storeError), Effect.flatMap(single(BucketRow)))
      return row.refused ? row.tokens - tokens : row.tokens
    })

  /** Drops windows that ended and buckets that are full again: they say nothing a missing row does not. */
  const purge = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    yield* sql`DELETE FROM rate_limit_counters WHERE expires_at <= ${real(now)}`
    yield* sql`DELETE FROM rate_limit_buckets WHERE full_at <= ${real(now)}`
  })

  return { store: RateLimiter.RateLimiterStore.of({ fixedWindow, tokenBucket }), purge }
})

/** The SQL store, with its purge every minute on this replica (any replica's purge serves all). */
export const storeLayer: Layer.Layer<RateLimiter.RateLimiterStore, never, SqlClient.SqlClient> = Layer.scoped(
  RateLimiter.RateLimiterStore,
  Effect.gen(function*() {
    const { purge, store } = yield* makeStore
    yield* purge.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Purging rate-limit rows failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.minutes(1))),
      Effect.delay(Duration.minutes(1)),
      Effect.forkScoped
    )
    return store
  })
)

/** Whether a user's idempotency key has a live record (see `ReplayCheck`). */
export const replayCheckLayer = Layer.effect(
  ReplayCheck,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return ReplayCheck.of({
      recorded: (userId, key) =>
        Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis).toISOString()
          // A claim whose lease ran out will be taken over and run, so it does not count as recorded.
          const rows = yield* sql`SELECT 1 AS found FROM idempotency_keys
            WHERE user_id = ${userId} AND idempotency_key = ${key} AND expires_at > ${now}
              AND (state = 'completed' OR locked_until > ${now})
            LIMIT 1`
          return rows.length > 0
        }).pipe(
          // Unknown is counted: a failing check must not make requests free.
          Effect.catchAll((error) => Effect.as(Effect.logWarning("Checking an idempotency key failed", error), false))
        )
    })
  })
)

/**
 * The store the server uses: `shared` is the SQL store on PostgreSQL (every
 * replica spends from one budget) and memory on SQLite (one process);
 * `per-replica` counts in each process's memory, so N replicas let up to N
 * times the limit through, unevenly as the balancer spreads a client.
 */
export const serverStoreLayer = (
  store: RateLimitSettings["store"]
): Layer.Layer<RateLimiter.RateLimiterStore, never, SqlClient.SqlClient> =>
  Layer.unwrapEffect(
    Effect.map(SqlClient.SqlClient, (sql) =>
      sql.onDialectOrElse({
        pg: () => (store === "shared" ? storeLayer : RateLimiter.layerStoreMemory),
        orElse: () => RateLimiter.layerStoreMemory
      }))
  )

/** The limiter and the replay check of the marketplace. */
export const layer = (
  store: RateLimitSettings["store"]
): Layer.Layer<RateLimiter.RateLimiter | ReplayCheck, never, SqlClient.SqlClient> =>
  Layer.merge(RateLimiter.layer.pipe(Layer.provide(serverStoreLayer(store))), replayCheckLayer)
