/**
 * Submissions and the registry indexer on SQLite and PostgreSQL: a real marketplace server, a real registry
 * stand-in serving packuments and tarballs (test/support/registry), the indexer built on the same database.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Layer, Option, Scope, TestClock, TestContext } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as Live from "../../../layers/marketplace/indexer/Live.js"
import type { IndexerOptions } from "../../../layers/marketplace/indexer/RegistryIndexer.js"
import { defaultRetryPolicy } from "../../../services/marketplace/Indexing.js"
import { type IndexOutcome, Indexer } from "../../../services/marketplace/Indexer.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import { hostile, integrityOf } from "../../support/registry/Tarballs.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"

const options = (registryUrl: string, extra: Partial<IndexerOptions> = {}): IndexerOptions => ({
  registryUrl: Option.some(new URL(registryUrl)),
  workers: 0,
  pollInterval: Duration.millis(50),
  recheckInterval: Option.none(),
  leaseMillis: 60_000,
  retry: defaultRetryPolicy,
  ...extra
})

describe.each(dialects)("submissions and the indexer on %s", (dialect) => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  const scope = Effect.runSync(Scope.make())
  const submitter = account("submitter@example.test", "user", { submit: ["packages:submit"], read: ["packages:read"] })
  const other = account("other@example.test", "user", { submit: ["packages:submit"] })
  const curator = account("curator@example.test", "admin", { curate: ["packages:curate"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    server = await startMarketplace(dialect, {}, {
      setup: Effect.all([submitter.setup, other.setup, curator.setup])
    })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const indexerLayer = (extra: Partial<IndexerOptions> = {}) =>
    Live.indexer(options(registry.url, extra)).pipe(Layer.provide(Database.client(server.database.parsed)))

  /** Runs every due job once, as a replica without workers would with `drain`. */
  const drain = (extra: Partial<IndexerOptions> = {}): Promise<ReadonlyArray<IndexOutcome>> =>
    Effect.runPromise(Effect.flatMap(Indexer, (indexer) => indexer.drain).pipe(Effect.provide(indexerLayer(extra))))

  const submit = (packageName: string, version?: string, token = submitter.account.tokens.submit!) =>
    call(server, {
      method: "POST",
      path: "/api/v1/submissions",
      body: version === undefined ? { packageName } : { packageName, version },
      headers: bearer(token)
    })

  const publish = async (name: string, version: string, extra: Partial<Parameters<typeof packClark>[0]> = {}, publish: Partial<Registry.Publish> = {}) => {
    const tarball = await packClark({ name, version, ...extra })
    registry.publish({ name, version, tarball, time: "2026-01-02T03:04:05.000Z", ...publish })
    return tarball
  }

  it("indexes a submitted package: verified, sanitised, searchable; the same submission again is not created", async () => {
    await publish("notes-keeper", "1.0.0", {
      readme: "# Notes keeper\n\n<script>alert('x')</script>\n\n<img src=\"https://tracker.example/p.png\" onerror=\"steal()\">\n\n[click](javascript:alert(1)) [docs](https://docs.example.test)\n"
    }, { sign: "valid" })
    const first = await submit("notes-keeper", "1.0.0")
    expect(first.status).toBe(202)
    expect(first.body.created).toBe(true)
    expect(first.body.submission).toMatchObject({ packageName: "notes-keeper", version: "1.0.0", status: "queued", error: null })
    expect(first.body.submission.id).toMatch(/^sub_/)
    const again = await submit("notes-keeper", "1.0.0")
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({ created: false, submission: { id: first.body.submission.id } })

    const outcomes = await drain()
    expect(outcomes.map((o) => [o.packageName, o.result])).toEqual([["notes-keeper", "indexed"]])

    const one = await call(server, { method: "GET", path: `/api/v1/submissions/${first.body.submission.id}`, headers: bearer(submitter.account.tokens.submit!) })
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({ status: "indexed", version: "1.0.0", error: null })

    const detail = await server.request("/api/v1/packages/notes-keeper")
    expect(detail.status).toBe(200)
    expect(detail.body).toMatchObject({
      name: "notes-keeper",
      displayName: "Display notes-keeper",
      curationStatus: "listed",
      license: "MIT",
      homepage: "https://example.test/home",
      repositoryUrl: "https://git.example.test/notes",
      latestVersion: "1.0.0",
      latest: {
        version: "1.0.0",
        publishedAt: "2026-01-02T03:04:05.000Z",
        tarballSha512Verified: true,
        hasProvenance: false,
        platforms: ["macos", "linux"],
        facets: [{ kind: "skill", isolation: "declarative", renderer: null, entry: "skills/notes.md", widgetId: null }]
      }
    })
    const latest = detail.body.latest
    expect(latest.registryIntegrity).toBe(integrityOf(registry.tarballs.get("notes-keeper@1.0.0")!))
    expect(latest.previews.map((p: { url: string }) => p.url)).toEqual(["https://cdn.example.test/shot.png"])
    const checks = Object.fromEntries(latest.securityChecks.map((c: { check: string; result: string }) => [c.check, c.result]))
    expect(checks).toEqual({
      integrity: "pass",
      "registry-signature": "pass",
      provenance: "warn",
      "install-scripts": "pass",
      "declared-reach": "pass",
      "facet-entries": "pass",
      "name-similarity": "pass"
    })
    expect(latest.readmeHtml).toContain("<h1>Notes keeper</h1>")
    expect(latest.readmeHtml).toContain("https://docs.example.test")
    expect(latest.readmeHtml).not.toMatch(/<script|onerror|javascript:|<img|tracker\.example/i)

    const search = await server.request("/api/v1/search?q=notes-keeper")
    expect(search.body.items.map((i: { name: string }) => i.name)).toContain("notes-keeper")
  })

  it("lists only the caller's submissions, and another account's id is not found", async () => {
    const mine = await call(server, { method: "GET", path: "/api/v1/submissions", headers: bearer(submitter.account.tokens.submit!) })
    expect(mine.status).toBe(200)
    expect(mine.body.items.length).toBeGreaterThan(0)
    const theirs = await call(server, { method: "GET", path: "/api/v1/submissions", headers: bearer(other.account.tokens.submit!) })
    expect(theirs.body.items).toEqual([])
    const peek = await call(server, { method: "GET", path: `/api/v1/submissions/${mine.body.items[0].id}`, headers: bearer(other.account.tokens.submit!) })
    expect(peek.status).toBe(404)
    expect(peek.body.error.code).toBe("not_found")
  })

  it("refuses without a credential, without the scope, and malformed bodies, storing nothing", async () => {
    const before = (await server.query(rows("submissions"))).length
    expect((await call(server, { method: "POST", path: "/api/v1/submissions", body: { packageName: "x-pkg" } })).status).toBe(401)
    const scopeless = await submit("x-pkg", undefined, submitter.account.tokens.read!)
    expect(scopeless.status).toBe(403)
    expect(scopeless.body.error.code).toBe("forbidden")
    for (const body of [{}, { packageName: "Not A Name" }, { packageName: "ok-name", version: "latest" }, { packageName: 7 }]) {
      const refused = await call(server, { method: "POST", path: "/api/v1/submissions", body, headers: bearer(submitter.account.tokens.submit!) })
      expect(refused.status, JSON.stringify(body)).toBe(400)
      expect(refused.body.error.code).toBe("validation_failed")
    }
    const notJson = await server.request("/api/v1/submissions", {
      method: "POST",
      headers: { ...bearer(submitter.account.tokens.submit!), "content-type": "application/json" },
      body: "{not json"
    })
    expect(notJson.status).toBe(400)
    expect((await server.query(rows("submissions"))).length).toBe(before)
    const badId = await call(server, { method: "GET", path: "/api/v1/submissions/nope", headers: bearer(submitter.account.tokens.submit!) })
    expect(badId.status).toBe(400)
  })

  it("creates one submission for identical requests sent at once", async () => {
    await publish("twin-pkg", "1.0.0")
    const answers = await Promise.all(Array.from({ length: 6 }, () => submit("twin-pkg", "1.0.0")))
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202))
    expect(answers.filter((a) => a.body.created).length).toBe(1)
    expect(new Set(answers.map((a) => a.body.submission.id)).size).toBe(1)
  })

  it("fails tampered, oversized and path-escaping tarballs and unknown packages, writing nothing", async () => {
    const honest = await packClark({ name: "tampered-pkg", version: "1.0.0" })
    const other = await packClark({ name: "tampered-pkg", version: "1.0.0", description: "changed" })
    registry.publish({ name: "tampered-pkg", version: "1.0.0", tarball: other, integrity: integrityOf(honest) })
    // Random text does not compress: the tarball stays far above the 20,000-byte limit set below.
    await publish("big-pkg", "1.0.0", { readme: randomBytes(150_000).toString("base64") })
    registry.publish({ name: "escape-pkg", version: "1.0.0", tarball: hostile([{ path: "package/../../evil.js", body: "pwned" }]) })
    await publish("forged-pkg", "1.0.0", {}, { sign: "wrong" })
    const ids = new Map<string, string>()
    for (const name of ["tampered-pkg", "big-pkg", "escape-pkg", "missing-pkg", "forged-pkg"]) {
      ids.set(name, (await submit(name)).body.submission.id)
    }
    const outcomes = await drain({ limits: { tarballBytes: 20_000 } })
    const byName = Object.fromEntries(outcomes.map((o) => [o.packageName, o]))
    expect(byName["tampered-pkg"]).toMatchObject({ result: "failed" })
    expect(byName["tampered-pkg"]!.error).toContain("sha512")
    expect(byName["big-pkg"]!.error).toContain("too-large")
    expect(byName["escape-pkg"]!.error).toContain("path-escape")
    expect(byName["missing-pkg"]!.error).toContain("has no missing-pkg")
    expect(byName["forged-pkg"]!.error).toBe("a registry signature does not verify: the signature does not verify")
    for (const [name, id] of ids) {
      const answer = await call(server, { method: "GET", path: `/api/v1/submissions/${id}`, headers: bearer(submitter.account.tokens.submit!) })
      expect(answer.body.status, name).toBe("failed")
      expect(answer.body.error, name).not.toContain(registry.url)
      expect((await server.request(`/api/v1/packages/${name}`)).status, name).toBe(404)
    }
    expect(await server.query(rows("packages", "name IN ('tampered-pkg', 'big-pkg', 'escape-pkg', 'missing-pkg', 'forged-pkg')"))).toEqual([])
  })

  it("lists install scripts, and holds a package whose scripts are undeclared reach for review", async () => {
    await publish("scripted-pkg", "1.0.0", { scripts: { postinstall: "node steal.js" } })
    await publish("declared-pkg", "1.0.0", {
      scripts: { install: "node build.js" },
      permissions: [{ kind: "lifecycle", value: "install", access: null }, { kind: "network", value: "api.example.test", access: null }]
    })
    await submit("scripted-pkg")
    await submit("declared-pkg")
    await drain()
    const checksOf = async (name: string) => {
      const detail = await server.query(rows("package_versions", `package_id = (SELECT id FROM packages WHERE name = '${name}')`))
      return JSON.parse(String(detail[0]!.securityChecks)) as Array<{ check: string; result: string; details?: unknown }>
    }
    const scripted = await checksOf("scripted-pkg")
    expect(scripted.find((c) => c.check === "install-scripts")).toEqual({ check: "install-scripts", result: "warn", details: { scripts: ["postinstall"] } })
    expect(scripted.find((c) => c.check === "declared-reach")?.result).toBe("fail")
    const [held] = await server.query(rows("packages", "name = 'scripted-pkg'"))
    expect(held!.curationStatus).toBe("unreviewed")
    expect((await server.request("/api/v1/packages/scripted-pkg")).status).toBe(404)
    const declared = await checksOf("declared-pkg")
    expect(declared.find((c) => c.check === "declared-reach")?.result).toBe("warn")
    expect((await server.request("/api/v1/packages/declared-pkg")).status).toBe(200)
  })

  it("warns of a name one edit away from a catalogue package", async () => {
    await publish("notes-keeped", "1.0.0")
    await submit("notes-keeped")
    await drain()
    const detail = await server.request("/api/v1/packages/notes-keeped")
    const similarity = detail.body.latest.securityChecks.find((c: { check: string }) => c.check === "name-similarity")
    expect(similarity).toEqual({ check: "name-similarity", result: "warn", details: { similarTo: ["notes-keeper"] } })
  })

  it("re-checks indexed packages for a new latest version, and a curator re-indexes one", async () => {
    await publish("moving-pkg", "1.0.0")
    await submit("moving-pkg")
    expect((await drain()).map((o) => o.result)).toEqual(["indexed"])
    await publish("moving-pkg", "1.1.0", {}, { time: "2026-02-01T00:00:00.000Z" })
    const queued = await Effect.runPromise(Effect.flatMap(Indexer, (indexer) => indexer.recheck).pipe(Effect.provide(indexerLayer())))
    expect(queued).toBeGreaterThan(0)
    const outcomes = await drain()
    expect(outcomes.find((o) => o.packageName === "moving-pkg")).toMatchObject({ result: "indexed", version: "1.1.0" })
    // Every other package's latest is what the catalogue holds: looked at, nothing rewritten.
    expect(outcomes.filter((o) => o.packageName !== "moving-pkg").every((o) => o.result === "unchanged" || o.result === "failed")).toBe(true)
    const versions = await server.request("/api/v1/packages/moving-pkg/versions")
    expect(versions.body.items.map((v: { version: string }) => v.version)).toEqual(["1.1.0", "1.0.0"])

    const notCurator = await call(server, { method: "POST", path: "/api/v1/curation/packages/moving-pkg/reindex", body: {}, headers: bearer(submitter.account.tokens.submit!) })
    expect(notCurator.status).toBe(403)
    const unknown = await call(server, { method: "POST", path: "/api/v1/curation/packages/no-such-pkg/reindex", body: {}, headers: bearer(curator.account.tokens.curate!) })
    expect(unknown.status).toBe(404)
    const reindex = await call(server, { method: "POST", path: "/api/v1/curation/packages/moving-pkg/reindex", body: { version: "1.0.0" }, headers: bearer(curator.account.tokens.curate!) })
    expect(reindex.status).toBe(202)
    expect(reindex.body).toMatchObject({ packageName: "moving-pkg", version: "1.0.0", status: "queued" })
    // Audited with the queueing, in its transaction; the refused attempts above recorded nothing.
    const audited = await server.query(rows("audit_log", "action = 'curation.reindex'"))
    expect(audited).toEqual([expect.objectContaining({ actorId: curator.account.id, targetKind: "package", target: "moving-pkg" })])
    expect(JSON.parse(String(audited[0]!.afterState))).toEqual({ job: reindex.body.id, version: "1.0.0", status: "queued" })
    const again = await drain()
    expect(again.map((o) => [o.packageName, o.result, o.version])).toEqual([["moving-pkg", "indexed", "1.0.0"]])
  })

  it("retries an unreachable registry with backoff, on the test clock", async () => {
    await publish("flaky-pkg", "1.0.0")
    const good = registry.packument("flaky-pkg")
    registry.route(Registry.packumentPath("flaky-pkg"), 503, "down")
    const id = (await submit("flaky-pkg")).body.submission.id
    const program = Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const indexer = yield* Indexer
      const first = yield* indexer.drain
      expect(first.map((o) => o.result)).toEqual(["retry"])
      // Not due before the first backoff (30 s) has passed.
      yield* TestClock.adjust(Duration.seconds(29))
      expect(yield* indexer.drain).toEqual([])
      registry.route(Registry.packumentPath("flaky-pkg"), 200, good)
      yield* TestClock.adjust(Duration.seconds(2))
      return yield* indexer.drain
    })
    const outcomes = await Effect.runPromise(program.pipe(Effect.provide(indexerLayer()), Effect.provide(TestContext.TestContext)))
    expect(outcomes.map((o) => [o.packageName, o.result])).toEqual([["flaky-pkg", "indexed"]])
    const answer = await call(server, { method: "GET", path: `/api/v1/submissions/${id}`, headers: bearer(submitter.account.tokens.submit!) })
    expect(answer.body).toMatchObject({ status: "indexed", error: null })
  })

  it("takes over a job whose worker died mid-way once its lease expires", async () => {
    await publish("orphan-pkg", "1.0.0")
    await submit("orphan-pkg")
    const program = Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const indexer = yield* Indexer
      const sql = yield* SqlClient.SqlClient
      // A replica claimed it and died: the job is `indexing` under a lease nobody will renew.
      const claimed = yield* Effect.flatMap(Indexer, () =>
        sql`UPDATE index_jobs SET status = 'indexing', worker = 'dead-replica', attempts = 1,
          lease_until = ${new Date(Date.now() + 60_000).toISOString()} WHERE package_name = 'orphan-pkg' RETURNING id`)
      expect(claimed.length).toBe(1)
      expect(yield* indexer.drain).toEqual([])
      yield* TestClock.adjust(Duration.seconds(61))
      return yield* indexer.drain
    })
    const outcomes = await Effect.runPromise(program.pipe(
      Effect.provide(Layer.merge(indexerLayer(), Database.client(server.database.parsed))),
      Effect.provide(TestContext.TestContext)
    ))
    expect(outcomes.map((o) => [o.packageName, o.result])).toEqual([["orphan-pkg", "indexed"]])
  })
})
