/**
 * The rate-limit store: `@effect/experimental`'s RateLimiter over the SQL
 * store on SQLite and PostgreSQL and over the library's memory store (what the
 * server uses on SQLite), with the TestClock. The SQL store must answer as the
 * memory store does, step for step; on PostgreSQL two clients (two replicas)
 * spend from one budget, also when they race.
 */
import { RateLimiter } from "@effect/experimental"
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, TestClock } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlRateLimits from "../../../layers/marketplace/sql/SqlRateLimits.js"
import { makeDatabase, type TestDatabase } from "../../support/Databases.js"

type Consume = Parameters<RateLimiter.RateLimiter["consume"]>[0]

type Answer =
  | { readonly allowed: true; readonly remaining: number; readonly resetAfter: number; readonly delay: number }
  | { readonly allowed: false; readonly retryAfter: number }

/** What a check answered, as plain numbers, so two stores' answers compare with toEqual. */
const outcome = (options: Consume): Effect.Effect<Answer, never, RateLimiter.RateLimiter> =>
  Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
    limiter.consume(options).pipe(
      Effect.map((result): Answer => ({
        allowed: true,
        remaining: result.remaining,
        resetAfter: Duration.toMillis(result.resetAfter),
        delay: Duration.toMillis(result.delay)
      })),
      Effect.catchTag("RateLimiterError", (error) =>
        error.reason === "Exceeded"
          ? Effect.succeed<Answer>({ allowed: false, retryAfter: Duration.toMillis(error.retryAfter) })
          : Effect.die(error))
    ))

const limiterOver = (store: Layer.Layer<RateLimiter.RateLimiterStore>) => RateLimiter.layer.pipe(Layer.provide(store))

const memory = limiterOver(RateLimiter.layerStoreMemory)

const sqlStore = (database: TestDatabase) =>
  Layer.unwrapEffect(Effect.map(SqlRateLimits.makeStore, ({ store }) => Layer.succeed(RateLimiter.RateLimiterStore, store)))
    .pipe(Layer.provide(Database.layer(database.parsed)))

/** A fixed sequence of checks and clock moves over two keys, both algorithms. */
const script = (prefix: string): ReadonlyArray<Consume | Duration.DurationInput> => {
  const steps: Array<Consume | Duration.DurationInput> = []
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  for (let i = 0; i < 120; i++) {
    const roll = next()
    if (roll < 0.2) {
      steps.push(Duration.millis(Math.floor(next() * 9000)))
    } else {
      steps.push({
        key: `${prefix}-${roll < 0.6 ? "a" : "b"}`,
        limit: 5,
        window: "20 seconds",
        algorithm: i % 2 === 0 ? "fixed-window" : "token-bucket",
        onExceeded: roll > 0.9 ? "delay" : "fail",
        tokens: roll > 0.85 ? 2 : 1
      })
    }
  }
  // Keys are per algorithm in the stores, so one key never mixes the two.
  return steps.map((step) =>
    typeof step === "object" && "key" in step ? { ...step, key: `${step.key}-${step.algorithm}` } : step
  )
}

const run = (steps: ReadonlyArray<Consume | Duration.DurationInput>) =>
  Effect.forEach(steps, (step): Effect.Effect<Answer | "tick", never, RateLimiter.RateLimiter> =>
    typeof step === "object" && step !== null && "key" in step
      ? outcome(step)
      : Effect.as(TestClock.adjust(step), "tick" as const))

describe.each(["sqlite", "postgres"] as const)("the SQL rate-limit store on %s", (dialect) => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await makeDatabase(dialect, { migrated: true })
  })
  afterAll(() => database.drop())
  const sql = () => limiterOver(sqlStore(database))

  it.effect("counts a fixed window: the limit, then refusals until the window ends", () =>
    Effect.gen(function*() {
      const check = outcome({ key: "fixed", limit: 3, window: "60 seconds" })
      expect(yield* check).toEqual({ allowed: true, remaining: 2, resetAfter: 20_000, delay: 0 })
      yield* TestClock.adjust("5 seconds")
      expect(yield* check).toEqual({ allowed: true, remaining: 1, resetAfter: 35_000, delay: 0 })
      expect(yield* check).toEqual({ allowed: true, remaining: 0, resetAfter: 55_000, delay: 0 })
      expect(yield* check).toEqual({ allowed: false, retryAfter: 55_000 })
      yield* TestClock.adjust("54 seconds")
      expect(yield* check).toEqual({ allowed: false, retryAfter: 1_000 })
      yield* TestClock.adjust("1 second")
      expect(yield* check).toEqual({ allowed: true, remaining: 2, resetAfter: 20_000, delay: 0 })
    }).pipe(Effect.provide(sql())))

  it.effect("a check of zero tokens reads the budget without spending it, also when it is spent", () =>
    Effect.gen(function*() {
      const spend = outcome({ key: "peek", limit: 2, window: "10 seconds" })
      const peek = outcome({ key: "peek", limit: 2, window: "10 seconds", tokens: 0 })
      expect(yield* peek).toMatchObject({ allowed: true, remaining: 2 })
      yield* spend
      yield* spend
      expect(yield* peek).toMatchObject({ allowed: true, remaining: 0 })
      expect(yield* spend).toEqual({ allowed: false, retryAfter: 10_000 })
      expect(yield* outcome({ key: "other", limit: 2, window: "10 seconds" })).toMatchObject({ remaining: 1 })
    }).pipe(Effect.provide(sql())))

  it.effect("refills a token bucket one token per window / limit", () =>
    Effect.gen(function*() {
      const take = outcome({ key: "bucket", limit: 2, window: "10 seconds", algorithm: "token-bucket" })
      expect(yield* take).toMatchObject({ allowed: true, remaining: 1 })
      expect(yield* take).toMatchObject({ allowed: true, remaining: 0 })
      expect(yield* take).toEqual({ allowed: false, retryAfter: 5_000 })
      yield* TestClock.adjust("5 seconds")
      expect(yield* take).toMatchObject({ allowed: true, remaining: 0 })
    }).pipe(Effect.provide(sql())))

  it.effect("answers step for step as the library's memory store does", () =>
    Effect.gen(function*() {
      const steps = script(`script-${dialect}`)
      const expected = yield* run(steps).pipe(Effect.provide(memory))
      // The memory run moved the TestClock; the SQL run starts from the same instant.
      const moved = steps.reduce<number>(
        (sum, step) => (typeof step === "object" && step !== null && "key" in step ? sum : sum + Duration.toMillis(step)),
        0
      )
      yield* TestClock.setTime(0)
      expect(moved).toBeGreaterThan(0)
      const actual = yield* run(steps).pipe(Effect.provide(sql()))
      expect(actual).toEqual(expected)
      expect(expected.filter((step) => step !== "tick" && !step.allowed).length).toBeGreaterThan(5)
    }))

  it.effect("purges windows that ended and buckets that are full again", () =>
    Effect.gen(function*() {
      yield* outcome({ key: "purge-window", limit: 2, window: "10 seconds" })
      yield* outcome({ key: "purge-bucket", limit: 2, window: "10 seconds", algorithm: "token-bucket" })
      const { purge } = yield* SqlRateLimits.makeStore
      const sql = yield* SqlClient.SqlClient
      const rows = Effect.map(
        sql<{ readonly key: string }>`SELECT key FROM rate_limit_counters WHERE key LIKE 'purge-%'
          UNION ALL SELECT key FROM rate_limit_buckets WHERE key LIKE 'purge-%'`,
        (found) => found.map((row) => row.key).sort()
      )
      yield* purge
      expect(yield* rows).toEqual(["purge-bucket", "purge-window"])
      yield* TestClock.adjust("5 seconds")
      yield* purge
      expect(yield* rows).toEqual([])
    }).pipe(Effect.provide(Layer.merge(sql(), Database.layer(database.parsed))), Effect.orDie))
})

describe.each(["sqlite", "postgres"] as const)("the server's rate-limit store on %s", (dialect) => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await makeDatabase(dialect, { migrated: true })
  })
  afterAll(() => database.drop())

  const counters = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT key FROM rate_limit_counters`)
  it.each([["shared", dialect === "postgres"], ["per-replica", false]] as const)(
    "%s keeps counters in the database: %s",
    async (store, inDatabase) => {
      const found = await Effect.runPromise(
        Effect.gen(function*() {
          const replicas = [SqlRateLimits.layer(store), SqlRateLimits.layer(store)]
          const check = (replica: number) =>
            outcome({ key: `server-${store}`, limit: 5, window: "60 seconds" }).pipe(Effect.provide(replicas[replica]!))
          expect(yield* check(0)).toMatchObject({ remaining: 4 })
          // Shared on PostgreSQL, the second replica sees the first one's request.
          expect(yield* check(1)).toMatchObject({ remaining: inDatabase ? 3 : 4 })
          return yield* counters
        }).pipe(Effect.provide(Database.layer(database.parsed)), Effect.orDie)
      )
      expect(found.length > 0).toBe(inDatabase)
      await Effect.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM rate_limit_counters`).pipe(
          Effect.provide(Database.layer(database.parsed)),
          Effect.orDie
        )
      )
    }
  )
})

describe("the SQL rate-limit store shared by two replicas on PostgreSQL", () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await makeDatabase("postgres", { migrated: true })
  })
  afterAll(() => database.drop())

  it.effect("spends one budget from both, and lets exactly the limit through when they race", () =>
    Effect.gen(function*() {
      const replicas = [limiterOver(sqlStore(database)), limiterOver(sqlStore(database))]
      const check = (replica: number, key: string) =>
        outcome({ key, limit: 10, window: "60 seconds" }).pipe(Effect.provide(replicas[replica]!))
      expect(yield* check(0, "shared")).toMatchObject({ remaining: 9 })
      expect(yield* check(1, "shared")).toMatchObject({ remaining: 8 })
      expect(yield* check(0, "shared")).toMatchObject({ remaining: 7 })

      // Each replica is one layer build (one pool) taking 20 concurrent checks.
      const race = (replica: number) =>
        Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
          Effect.all(
            Array.from({ length: 20 }, () =>
              Effect.either(limiter.consume({ key: "race", limit: 10, window: "60 seconds" }))),
            { concurrency: "unbounded" }
          )).pipe(Effect.provide(replicas[replica]!))
      const [a, b] = yield* Effect.all([race(0), race(1)], { concurrency: 2 })
      const answers = [...a!, ...b!]
      expect(answers.filter(Either.isRight)).toHaveLength(10)
      expect(answers.filter(Either.isRight).map((answer) => answer.right.remaining).sort((x, y) => x - y)).toEqual(
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
      )
    }))
})
