/**
 * The scheduled re-check on the test clock, on SQLite and PostgreSQL: a replica's workers and re-check fiber
 * (the indexer layer with workers, as the server runs it) over a catalogue holding one indexed package. A
 * version published to the registry stand-in afterwards is not looked for before the interval has passed;
 * once it has, the package's job is queued again and a worker indexes the new version beside the old one.
 */
import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Option, Scope, TestClock, TestContext } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as Live from "../../../layers/marketplace/indexer/Live.js"
import type { IndexerOptions } from "../../../layers/marketplace/indexer/RegistryIndexer.js"
import { defaultRetryPolicy } from "../../../services/marketplace/Indexing.js"
import { Indexer } from "../../../services/marketplace/Indexer.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import { account, bearer, call } from "../fixtures/Accounts.js"

const interval = Duration.hours(1)
const poll = Duration.minutes(5)

describe.each(dialects)("the scheduled re-check on %s", (dialect) => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  const scope = Effect.runSync(Scope.make())
  const submitter = account("recheck@example.test", "user", { submit: ["packages:submit"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    server = await startMarketplace(dialect, {}, { setup: submitter.setup })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const options = (extra: Partial<IndexerOptions>): IndexerOptions => ({
    registryUrl: Option.some(new URL(registry.url)),
    workers: 0,
    pollInterval: poll,
    recheckInterval: Option.none(),
    // Longer than the test clock is moved: the job is never taken over mid-way here.
    leaseMillis: 24 * 3_600_000,
    retry: defaultRetryPolicy,
    ...extra
  })

  const publish = async (version: string, time: string) =>
    registry.publish({ name: "growing-pkg", version, tarball: await packClark({ name: "growing-pkg", version }), time })

  const job = (sql: SqlClient.SqlClient) =>
    Effect.map(
      sql<{ readonly status: string; readonly version: string | null; readonly reason: string }>`SELECT status, version, reason
        FROM index_jobs WHERE package_name = 'growing-pkg' AND requested = ''`,
      (found) => found[0]
    )

  const packumentAsked = () => registry.requests.filter((path) => path === Registry.packumentPath("growing-pkg")).length

  it("queues and indexes a newly published version once the interval has passed, and nothing before", async () => {
    await publish("1.0.0", "2026-01-01T00:00:00.000Z")
    const submitted = await call(server, {
      method: "POST",
      path: "/api/v1/submissions",
      body: { packageName: "growing-pkg" },
      headers: bearer(submitter.account.tokens.submit!)
    })
    expect(submitted.status).toBe(202)
    const first = await Effect.runPromise(Effect.flatMap(Indexer, (indexer) => indexer.drain).pipe(
      Effect.provide(Live.indexer(options({})).pipe(Layer.provide(Database.client(server.database.parsed))))
    ))
    expect(first.map((o) => [o.result, o.version])).toEqual([["indexed", "1.0.0"]])
    await publish("1.1.0", "2026-02-01T00:00:00.000Z")
    const askedBefore = packumentAsked()

    const replica = Live.workers(options({ workers: 1, recheckInterval: Option.some(interval) })).pipe(
      Layer.provideMerge(Database.client(server.database.parsed))
    )
    type Job = Effect.Effect.Success<ReturnType<typeof job>>
    /** A moment of real time: the replica's requests and writes are real I/O, not the test clock's. */
    const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
    /** Reads the job until `done`, moving the test clock by `step` between reads (at most 80 reads). */
    const until = (sql: SqlClient.SqlClient, done: (row: Job) => boolean, step: Duration.Duration) =>
      Effect.gen(function*() {
        for (let i = 0; i < 80; i++) {
          const row = yield* job(sql)
          if (done(row)) return row
          yield* TestClock.adjust(step)
          yield* settle
        }
        return yield* job(sql)
      })

    const program = Effect.gen(function*() {
      // The clock is set before the replica starts, so its first re-check is due one interval from now.
      yield* TestClock.setTime(Date.now())
      const sql = Context.get(yield* Layer.build(replica), SqlClient.SqlClient)

      // The worker polls meanwhile (every 5 minutes of the test clock), but nothing is queued for it.
      yield* TestClock.adjust(Duration.subtract(interval, Duration.minutes(1)))
      for (let i = 0; i < 4; i++) yield* settle
      expect(yield* job(sql)).toEqual({ status: "indexed", version: "1.0.0", reason: "submission" })
      expect(packumentAsked()).toBe(askedBefore)

      // The interval has passed: the re-check queues the package again (its queries may still be running).
      yield* TestClock.adjust(Duration.minutes(1))
      const queued = yield* until(sql, (row) => row?.reason === "recheck", Duration.zero)
      expect(queued?.reason).toBe("recheck")

      // The worker claims it at its next poll and indexes the registry's new latest.
      return yield* until(sql, (row) => row?.status === "indexed" && row.version === "1.1.0", poll)
    })
    const done = await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(TestContext.TestContext)))
    expect(done).toEqual({ status: "indexed", version: "1.1.0", reason: "recheck" })
    expect(packumentAsked()).toBeGreaterThan(askedBefore)

    const versions = await server.request("/api/v1/packages/growing-pkg/versions")
    expect(versions.status).toBe(200)
    expect(versions.body.items.map((v: { version: string }) => v.version)).toEqual(["1.1.0", "1.0.0"])
    const detail = await server.request("/api/v1/packages/growing-pkg")
    expect(detail.body).toMatchObject({ latestVersion: "1.1.0", latest: { version: "1.1.0", tarballSha512Verified: true } })
  }, 120_000)
})
