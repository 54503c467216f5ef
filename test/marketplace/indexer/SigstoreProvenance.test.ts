/**
 * Provenance verified for real through the indexer, on SQLite and PostgreSQL: the registry stand-in serves
 * versions with npm's attestations signed through the test's own Sigstore (Fulcio with a CT log, Rekor, over
 * local HTTP: test/support/sigstore/MockSigstore.ts), and the indexer verifies them with the product's
 * verifier (layers/registry/Sigstore.ts) given that Sigstore's trusted root. A submitted version with a valid
 * SLSA bundle is indexed with `hasProvenance` and found by search; a bundle altered after signing is refused
 * by Sigstore itself (the failed check's code in the submission's error), and nothing of it is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as Live from "../../../layers/marketplace/indexer/Live.js"
import { IndexerConfig, trustedRootSetting } from "../../../layers/marketplace/indexer/RegistryIndexer.js"
import { type IndexOutcome, Indexer } from "../../../services/marketplace/Indexer.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { attestations, honestSubject, signedAttestations, slsa } from "../../support/registry/Attestations.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import * as MockSigstore from "../../support/sigstore/MockSigstore.js"
import { flipSignature, rewriteStatement, withoutSET } from "../../support/sigstore/Tamper.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"

describe.each(dialects)("provenance signed through a real Sigstore flow, indexed on %s", (dialect) => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  let sigstore: MockSigstore.MockSigstore
  const scope = Effect.runSync(Scope.make())
  const submitter = account("sigstore@example.test", "user", { submit: ["packages:submit"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    sigstore = await Effect.runPromise(Scope.extend(MockSigstore.start, scope))
    server = await startMarketplace(dialect, {}, { setup: submitter.setup })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /**
   * Indexes every queued job with the indexer as its settings make it, trusting this test's Sigstore through
   * `MARKETPLACE_SIGSTORE_TRUSTED_ROOT`: the product's verifier given that trusted root.
   */
  const drain = (): Promise<ReadonlyArray<IndexOutcome>> =>
    Effect.runPromise(Effect.gen(function*() {
      const options = yield* IndexerConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
        ["MARKETPLACE_REGISTRY_URL", registry.url],
        ["MARKETPLACE_INDEXER_WORKERS", "0"],
        ["MARKETPLACE_INDEXER_RECHECK", "off"],
        [trustedRootSetting, sigstore.trustedRootPath]
      ]))))
      return yield* Effect.flatMap(Indexer, (indexer) => indexer.drain).pipe(
        Effect.provide(Live.indexer(options).pipe(Layer.provide(Database.client(server.database.parsed))))
      )
    }))

  const submit = async (packageName: string) => {
    const answer = await call(server, {
      method: "POST",
      path: "/api/v1/submissions",
      body: { packageName, version: "1.0.0" },
      headers: bearer(submitter.account.tokens.submit!)
    })
    expect(answer.status).toBe(202)
    return answer.body.submission.id as string
  }

  const submission = async (id: string) =>
    (await call(server, { method: "GET", path: `/api/v1/submissions/${id}`, headers: bearer(submitter.account.tokens.submit!) })).body

  const tarballPath = (name: string) => `/${name}/-/${name}-1.0.0.tgz`
  const checksOf = (latest: { securityChecks: Array<{ check: string; result: string }> }) =>
    Object.fromEntries(latest.securityChecks.map((c) => [c.check, c.result]))

  it("a version whose provenance verifies is indexed with hasProvenance, a passing check, and found by search", async () => {
    const name = "sigstore-signed-pkg"
    const bytes = await packClark({ name, version: "1.0.0" })
    registry.publish({ name, version: "1.0.0", tarball: bytes, sign: "valid", attestations: await signedAttestations(sigstore, registry.key, name, "1.0.0", bytes) })
    const id = await submit(name)
    expect((await drain()).map((o) => [o.packageName, o.result])).toEqual([[name, "indexed"]])

    expect(await submission(id)).toMatchObject({ status: "indexed", version: "1.0.0", error: null })
    const detail = await server.request(`/api/v1/packages/${name}`)
    expect(detail.status).toBe(200)
    expect(detail.body.latest).toMatchObject({ version: "1.0.0", tarballSha512Verified: true, hasProvenance: true })
    expect(checksOf(detail.body.latest)).toMatchObject({ integrity: "pass", "registry-signature": "pass", provenance: "pass" })
    expect((await server.request(`/api/v1/packages/${name}/versions`)).body.items).toMatchObject([{ version: "1.0.0", hasProvenance: true }])
    const search = await server.request(`/api/v1/search?q=${name}`)
    expect(search.body.items.map((item: { name: string }) => item.name)).toContain(name)
  })

  type Make = (name: string, bytes: Buffer) => Promise<object>
  const honest = (name: string, bytes: Buffer) => ({ name, version: "1.0.0", sha512: honestSubject(name, "1.0.0", bytes).sha512 })
  const tampered: ReadonlyArray<readonly [string, string, Make, string]> = [
    [
      "a statement rewritten after signing to name the served bytes",
      "sigstore-rewritten",
      async (name, bytes) =>
        rewriteStatement(await sigstore.provenance(honest(name, Buffer.from("other bytes"))), MockSigstore.provenanceStatement(honest(name, bytes))),
      "TLOG_BODY_ERROR"
    ],
    ["signature bytes flipped", "sigstore-flipped", async (name, bytes) => flipSignature(await sigstore.provenance(honest(name, bytes))), "TLOG_BODY_ERROR"],
    ["a certificate from a CA the trust root does not name", "sigstore-rogue-ca", (name, bytes) => sigstore.provenance(honest(name, bytes), { rogueCA: true }), "CERTIFICATE_ERROR"],
    ["the signed entry timestamp removed", "sigstore-no-set", async (name, bytes) => withoutSET(await sigstore.provenance(honest(name, bytes))), "TIMESTAMP_ERROR"]
  ]

  for (const [title, name, make, code] of tampered) {
    it(`fails ${title}: refused by Sigstore (${code}), nothing stored, the tarball never fetched`, async () => {
      const bytes = await packClark({ name, version: "1.0.0" })
      registry.publish({ name, version: "1.0.0", tarball: bytes, sign: "valid", attestations: attestations([[slsa, await make(name, bytes)]]) })
      const id = await submit(name)
      const error = `the provenance attestation does not verify: Sigstore refused a bundle (VerificationError: ${code})`
      expect(await drain()).toMatchObject([{ packageName: name, result: "failed", error }])
      expect(await submission(id)).toMatchObject({ status: "failed", error })
      expect((await server.request(`/api/v1/packages/${name}`)).status).toBe(404)
      expect(await server.query(rows("packages", `name = '${name}'`))).toEqual([])
      expect(registry.requests).not.toContain(tarballPath(name))
    })
  }
})
