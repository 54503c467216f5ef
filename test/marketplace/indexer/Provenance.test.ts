/**
 * Provenance through the indexer, on SQLite and PostgreSQL: the registry stand-in serves a version with
 * npm's attestations (a SLSA provenance bundle and npm's publish attestation, the packument listing them as
 * npm's does). Bundles pass or fail by the verifier the indexer is given (a stand-in here, to see what reaches
 * it), and the public listing says `hasProvenance` only for a version whose SLSA bundle verified: a tampered,
 * refused or merely publish-attested version is never shown as provenanced. Bundles signed for real and
 * verified by the product's verifier: SigstoreProvenance.test.ts beside this file.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as Live from "../../../layers/marketplace/indexer/Live.js"
import type { IndexerOptions } from "../../../layers/marketplace/indexer/RegistryIndexer.js"
import { sigstoreVerify } from "../../../layers/registry/HttpRegistryPackages.js"
import type { VerifyBundle } from "../../../layers/registry/Provenance.js"
import { defaultRetryPolicy } from "../../../services/marketplace/Indexing.js"
import { type IndexOutcome, Indexer } from "../../../services/marketplace/Indexer.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { attestations, bundle, honestSubject, publishAttestation, slsa } from "../../support/registry/Attestations.js"
import { packClark } from "../../support/registry/ClarkPackages.js"
import * as Registry from "../../support/registry/Registry.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"

describe.each(dialects)("provenance through the indexer on %s", (dialect) => {
  let server: RunningMarketplace
  let registry: Registry.Registry
  const scope = Effect.runSync(Scope.make())
  const submitter = account("provenance@example.test", "user", { submit: ["packages:submit"] })

  beforeAll(async () => {
    registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
    server = await startMarketplace(dialect, {}, { setup: submitter.setup })
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** Indexes every queued job with `verifyBundle` as Sigstore. */
  const drain = (verifyBundle: VerifyBundle): Promise<ReadonlyArray<IndexOutcome>> => {
    const options: IndexerOptions = {
      registryUrl: Option.some(new URL(registry.url)),
      workers: 0,
      pollInterval: Duration.millis(50),
      recheckInterval: Option.none(),
      leaseMillis: 60_000,
      retry: defaultRetryPolicy,
      verifyBundle
    }
    return Effect.runPromise(Effect.flatMap(Indexer, (indexer) => indexer.drain).pipe(
      Effect.provide(Live.indexer(options).pipe(Layer.provide(Database.client(server.database.parsed))))
    ))
  }

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

  /** Publishes `name@1.0.0`, signed, with the attestations `make` builds for its bytes. */
  const publish = async (name: string, make: (bytes: Buffer) => ReadonlyArray<readonly [string, unknown]>) => {
    const bytes = await packClark({ name, version: "1.0.0" })
    registry.publish({ name, version: "1.0.0", tarball: bytes, sign: "valid", attestations: attestations(make(bytes)) })
    return bytes
  }

  const tarballPath = (name: string) => `/${name}/-/${name}-1.0.0.tgz`
  const checksOf = (latest: { securityChecks: Array<{ check: string; result: string }> }) =>
    Object.fromEntries(latest.securityChecks.map((c) => [c.check, c.result]))

  it("a version whose SLSA provenance bundle verifies is listed with hasProvenance and a passing check", async () => {
    await publish("provenanced-pkg", (bytes) => [
      [slsa, bundle(honestSubject("provenanced-pkg", "1.0.0", bytes), slsa)],
      [publishAttestation, bundle(honestSubject("provenanced-pkg", "1.0.0", bytes), publishAttestation, registry.key.keyid)]
    ])
    const id = await submit("provenanced-pkg")
    const seen: Array<{ readonly predicateType: string; readonly key: string | undefined }> = []
    const outcomes = await drain(async (given, key) => {
      const payload = JSON.parse(Buffer.from((given as any).dsseEnvelope.payload, "base64").toString("utf8"))
      seen.push({ predicateType: payload.predicateType, key })
    })
    expect(outcomes.map((o) => [o.packageName, o.result])).toEqual([["provenanced-pkg", "indexed"]])
    // Both bundles reached the verifier; the publish attestation with the registry key its signature names.
    expect(seen.map((s) => s.predicateType)).toEqual([slsa, publishAttestation])
    expect(seen[0]!.key).toBeUndefined()
    expect(seen[1]!.key).toContain(registry.key.key)

    expect(await submission(id)).toMatchObject({ status: "indexed", version: "1.0.0", error: null })
    const detail = await server.request("/api/v1/packages/provenanced-pkg")
    expect(detail.status).toBe(200)
    expect(detail.body.latest).toMatchObject({ version: "1.0.0", tarballSha512Verified: true, hasProvenance: true })
    expect(checksOf(detail.body.latest)).toMatchObject({ integrity: "pass", "registry-signature": "pass", provenance: "pass" })
    const versions = await server.request("/api/v1/packages/provenanced-pkg/versions")
    expect(versions.body.items).toMatchObject([{ version: "1.0.0", hasProvenance: true }])
  })

  it("npm's publish attestation alone is no provenance: indexed with hasProvenance false and a warning", async () => {
    await publish("publish-only-pkg", (bytes) => [
      [publishAttestation, bundle(honestSubject("publish-only-pkg", "1.0.0", bytes), publishAttestation, registry.key.keyid)]
    ])
    await submit("publish-only-pkg")
    expect((await drain(async () => {})).map((o) => o.result)).toEqual(["indexed"])
    const detail = await server.request("/api/v1/packages/publish-only-pkg")
    expect(detail.body.latest.hasProvenance).toBe(false)
    expect(checksOf(detail.body.latest).provenance).toBe("warn")
  })

  const refusals: ReadonlyArray<readonly [string, string, (bytes: Buffer) => ReadonlyArray<readonly [string, unknown]>, VerifyBundle, string]> = [
    [
      "a statement about other bytes (a tampered tarball or bundle)",
      "tampered-attest",
      (bytes) => [[slsa, bundle({ ...honestSubject("tampered-attest", "1.0.0", bytes), sha512: "00".repeat(64) }, slsa)]],
      async () => {},
      "a statement is about another package or other bytes"
    ],
    [
      "a statement about another package",
      "borrowed-attest",
      (bytes) => [[slsa, bundle(honestSubject("other-pkg", "1.0.0", bytes), slsa)]],
      async () => {},
      "a statement is about another package or other bytes"
    ],
    [
      "a bundle whose signature Sigstore refuses",
      "forged-attest",
      (bytes) => [[slsa, bundle(honestSubject("forged-attest", "1.0.0", bytes), slsa)]],
      () => Promise.reject(Object.assign(new Error("signature mismatch"), { name: "VerificationError" })),
      "Sigstore refused a bundle (VerificationError)"
    ]
  ]

  for (const [title, name, make, verifyBundle, problem] of refusals) {
    it(`fails ${title}: reported, nothing stored, the tarball never fetched`, async () => {
      await publish(name, make)
      const id = await submit(name)
      const outcomes = await drain(verifyBundle)
      expect(outcomes).toMatchObject([{ packageName: name, result: "failed", error: `the provenance attestation does not verify: ${problem}` }])
      expect(await submission(id)).toMatchObject({ status: "failed", error: `the provenance attestation does not verify: ${problem}` })
      expect((await server.request(`/api/v1/packages/${name}`)).status).toBe(404)
      expect(await server.query(rows("packages", `name = '${name}'`))).toEqual([])
      expect(registry.requests).not.toContain(tarballPath(name))
    })
  }

  it("the real Sigstore verifier refuses a well-formed bundle Sigstore never signed: failed, never provenanced", async () => {
    await publish("unsigned-attest", (bytes) => [[slsa, bundle(honestSubject("unsigned-attest", "1.0.0", bytes), slsa)]])
    const id = await submit("unsigned-attest")
    const tuf = fs.mkdtempSync(path.join(os.tmpdir(), "clark-tuf-"))
    try {
      const outcomes = await drain(sigstoreVerify(tuf))
      expect(outcomes).toMatchObject([{ packageName: "unsigned-attest", result: "failed" }])
      expect(outcomes[0]!.error).toMatch(/^the provenance attestation does not verify: (Sigstore refused a bundle|Sigstore's trust root)/)
      expect((await submission(id)).status).toBe("failed")
      expect(await server.query(rows("packages", "name = 'unsigned-attest'"))).toEqual([])
    } finally {
      fs.rmSync(tuf, { recursive: true, force: true })
    }
  })
})
