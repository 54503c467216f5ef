/**
 * Three replicas, each with its own connection pool and one indexer worker, share one PostgreSQL queue:
 * every submitted version is indexed exactly once (one claim, one tarball download, one stored version).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as Live from "../../../layers/marketplace/indexer/Live.js"
import { defaultRetryPolicy } from "../../../services/marketplace/Indexing.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"

const count = 24

describe("three indexer replicas on one PostgreSQL", () => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  const scope = Effect.runSync(Scope.make())
  const submitter = account("replicas@example.test", "user", { submit: ["packages:submit"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    server = await startMarketplace("postgres", {}, { setup: submitter.setup })
  }, 120_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await server?.close()
  })

  it("index each version exactly once", async () => {
    const names = Array.from({ length: count }, (_, i) => `replica-pkg-${String(i).padStart(2, "0")}`)
    for (const name of names) registry.publish({ name, version: "1.0.0", tarball: await packClark({ name, version: "1.0.0" }) })
    for (const name of names) {
      const answer = await call(server, { method: "POST", path: "/api/v1/submissions", body: { packageName: name, version: "1.0.0" }, headers: bearer(submitter.account.tokens.submit!) })
      expect(answer.status).toBe(202)
    }
    const replica = Live.workers({
      registryUrl: Option.some(new URL(registry.url)),
      workers: 1,
      pollInterval: Duration.millis(20),
      recheckInterval: Option.none(),
      leaseMillis: 60_000,
      retry: defaultRetryPolicy
    }).pipe(Layer.provide(Database.client(server.database.parsed)))
    const replicas = Effect.runSync(Scope.make())
    await Effect.runPromise(Layer.buildWithScope(Layer.mergeAll(replica, replica.pipe(Layer.fresh), replica.pipe(Layer.fresh)), replicas))
    try {
      // Bounded polling across the replicas' fibers: at most 60 s.
      for (let waited = 0; waited < 600; waited++) {
        const jobs = await server.query(rows("index_jobs", "status <> 'indexed'"))
        if (jobs.length === 0) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } finally {
      await Effect.runPromise(Scope.close(replicas, Exit.void))
    }
    const jobs = await server.query(rows("index_jobs"))
    expect(jobs.length).toBe(count)
    expect(jobs.every((job) => job.status === "indexed" && Number(job.attempts) === 1)).toBe(true)
    // The work was shared: more than one replica's worker finished jobs would be likely, not certain, so
    // what is checked is that none was done twice.
    for (const name of names) {
      expect(registry.requests.filter((path) => path === `/${name}/-/${name}-1.0.0.tgz`).length, name).toBe(1)
    }
    expect((await server.query(rows("package_versions"))).length).toBe(count)
  })
})
