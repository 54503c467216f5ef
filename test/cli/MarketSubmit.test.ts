/**
 * `clark market submit`, the compiled CLI as its own process, against a marketplace whose indexer workers run
 * over the registry stand-in: the submitted package ends up indexed and in search, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as Live from "../../layers/marketplace/indexer/Live.js"
import { defaultRetryPolicy } from "../../services/marketplace/Indexing.js"
import { account } from "../marketplace/fixtures/Accounts.js"
import { runClark } from "../support/Cli.js"
import { dialects } from "../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../support/MarketplaceServer.js"
import { packClark } from "../support/registry/ClarkPackages.js"
import * as Registry from "../support/registry/Registry.js"

describe.each(dialects)("clark market submit on %s", (dialect) => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  const scope = Effect.runSync(Scope.make())
  const submitter = account("cli-submit@example.test", "user", { submit: ["packages:submit"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    server = await startMarketplace(dialect, {}, { setup: submitter.setup })
    const workers = Live.workers({
      registryUrl: Option.some(new URL(registry.url)),
      workers: 1,
      pollInterval: Duration.millis(100),
      recheckInterval: Option.none(),
      leaseMillis: 60_000,
      retry: defaultRetryPolicy
    }).pipe(Layer.provide(Database.client(server.database.parsed)))
    await Effect.runPromise(Layer.buildWithScope(workers, scope))
  }, 120_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await server?.close()
  })

  const clark = (args: ReadonlyArray<string>) =>
    runClark(["market", ...args], {
      env: { ...process.env, CLARK_MARKETPLACE_URL: server.baseUrl, CLARK_MARKETPLACE_TOKEN: submitter.account.tokens.submit!, HOME: "/nonexistent" },
      timeout: 60_000
    })

  it("waits until the package is indexed, and it is found verified in search", async () => {
    registry.publish({ name: "cli-example", version: "1.2.0", tarball: await packClark({ name: "cli-example", version: "1.2.0", readme: "# Example" }) })
    const outcome = await clark(["submit", "cli-example@1.2.0"])
    expect(outcome.code, outcome.output).toBe(0)
    expect(outcome.stdout.trim()).toBe("cli-example@1.2.0: indexed")
    expect(outcome.stdout + outcome.stderr).not.toContain(submitter.account.tokens.submit!)
    const search = await server.request("/api/v1/search?q=cli-example")
    expect(search.body.items.map((item: { name: string }) => item.name)).toEqual(["cli-example"])
    const detail = await server.request("/api/v1/packages/cli-example")
    expect(detail.body.latest).toMatchObject({ version: "1.2.0", tarballSha512Verified: true })
  }, 90_000)

  it("ends with the failure and a non-zero status when indexing fails", async () => {
    const outcome = await clark(["submit", "no-such-package"])
    expect(outcome.code).toBe(1)
    expect(outcome.stderr).toContain("failed: no-such-package: failed (the registry has no no-such-package)")
  }, 90_000)
})
