/**
 * Installing a package with provenance through the real node process (`clark node serve`, the compiled CLI):
 * a marketplace lists the widget, the registry stand-in serves its tarball with npm's attestations signed
 * through the test's own Sigstore (test/support/sigstore/MockSigstore.ts), and the node is launched with
 * `CC_SIGSTORE_TRUSTED_ROOT` naming that Sigstore's trusted root. The node's API shows no provenance field
 * (node-api.md names none): a verified attestation lets the install go on (asked, granted, installed), one that
 * does not verify is 403 POLICY_REFUSED with `reason: provenance` before anything is asked or installed.
 * Without the setting the node verifies against Sigstore's own root, and the same bundles are refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startMarketplace } from "../../support/MarketplaceServer.js"
import { spawnNode } from "../../support/NodeProcess.js"
import { attestations, honestSubject, signedAttestations, slsa } from "../../support/registry/Attestations.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import { examples, tideCatalogue, tideName } from "../../support/TideListing.js"
import * as MockSigstore from "../../support/sigstore/MockSigstore.js"
import { rewriteStatement } from "../../support/sigstore/Tamper.js"

const name = tideName


type Attest = (sigstore: MockSigstore.MockSigstore, registry: Registry.Registry, bytes: Buffer) => Promise<unknown>

/** The registry serving the widget with the attestations `attest` makes, and a marketplace listing it. */
const setup = (attest: Attest) =>
  Effect.gen(function*() {
    const registry = yield* Registry.start
    const sigstore = yield* MockSigstore.start
    const tarball = yield* Effect.promise(() => packFolder(path.join(examples, "tide-widget")))
    registry.publish({ name, version: "1.0.0", tarball, sign: "valid", attestations: yield* Effect.promise(() => attest(sigstore, registry, tarball)) })
    const market = yield* Effect.acquireRelease(
      Effect.promise(() => startMarketplace("sqlite", tideCatalogue(integrityOf(tarball)))),
      (running) => Effect.promise(() => running.close())
    )
    return { registry, sigstore, market, integrity: integrityOf(tarball) }
  })

/** `clark node serve` with the registry and marketplace as the host application passes them, and `env`. */
const node = (urls: { readonly registry: string; readonly market: string }, env: Record<string, string>) =>
  Effect.gen(function*() {
    const parent = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "clark-provenance-node-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const dataDir = path.join(parent, "data")
    fs.mkdirSync(dataDir)
    return yield* spawnNode({
      dataDir,
      script: { rules: [] },
      env: { CC_REGISTRY_URL: urls.registry, CC_MARKETPLACE_URL: urls.market, ...env }
    })
  })

const listing = `/packages/listing/${encodeURIComponent(name)}`
const signed: Attest = (sigstore, registry, bytes) => signedAttestations(sigstore, registry.key, name, "1.0.0", bytes)

describe("installing a package with provenance, in the real node process", () => {
  it.scoped("a provenance signed for real verifies against the configured trust root: asked, granted, installed", () =>
    Effect.gen(function*() {
      const { integrity, market, registry, sigstore } = yield* setup(signed)
      const running = yield* node({ registry: registry.url, market: market.baseUrl }, { CC_SIGSTORE_TRUSTED_ROOT: sigstore.trustedRootPath })
      const asked = yield* running.fetchJson("POST", "/packages/install", { packageId: name })
      expect(asked).toMatchObject({ status: 202, body: { code: "APPROVAL_REQUIRED" } })
      // The tarball was fetched, and its attestations verified, before the question was asked.
      expect(registry.requests).toContain(`/${name}/-/tide-widget-1.0.0.tgz`)
      const approval = yield* running.fetchJson("GET", `/packages/approvals/${asked.body.approvalId}`)
      const decided = yield* running.fetchJson("POST", `/packages/approvals/${asked.body.approvalId}/decision`, {
        decision: "granted",
        digest: approval.body.operationDigest
      })
      expect(decided).toMatchObject({ status: 200, body: { installed: { packageId: name, version: "1.0.0" } } })
      expect((yield* running.fetchJson("GET", listing)).body.installed).toMatchObject({ version: "1.0.0", digest: integrity, current: true })
    }), { timeout: 120_000 })

  it.scoped("a statement rewritten after signing is 403 POLICY_REFUSED (provenance): nothing asked, nothing installed", () =>
    Effect.gen(function*() {
      const { market, registry, sigstore } = yield* setup(async (sigstore, _registry, bytes) => {
        const sha512 = honestSubject(name, "1.0.0", bytes).sha512
        const signedOther = await sigstore.provenance({ name, version: "1.0.0", sha512: honestSubject(name, "1.0.0", Buffer.from("other")).sha512 })
        return attestations([[slsa, rewriteStatement(signedOther, MockSigstore.provenanceStatement({ name, version: "1.0.0", sha512 }))]])
      })
      const running = yield* node({ registry: registry.url, market: market.baseUrl }, { CC_SIGSTORE_TRUSTED_ROOT: sigstore.trustedRootPath })
      expect(yield* running.fetchJson("POST", "/packages/install", { packageId: name })).toEqual({
        status: 403,
        body: {
          code: "POLICY_REFUSED",
          message: "The provenance attestation does not verify: Sigstore refused a bundle (VerificationError: TLOG_BODY_ERROR)",
          reason: "provenance"
        }
      })
      expect((yield* running.fetchJson("GET", listing)).body.installed).toBeNull()
      expect(registry.requests).not.toContain(`/${name}/-/tide-widget-1.0.0.tgz`)
    }), { timeout: 120_000 })

  it.scoped("without CC_SIGSTORE_TRUSTED_ROOT the node trusts only Sigstore's root: the same signed package is refused", () =>
    Effect.gen(function*() {
      const { market, registry } = yield* setup(signed)
      const running = yield* node({ registry: registry.url, market: market.baseUrl }, {})
      const refused = yield* running.fetchJson("POST", "/packages/install", { packageId: name })
      expect(refused).toMatchObject({ status: 403, body: { code: "POLICY_REFUSED", reason: "provenance" } })
      expect((yield* running.fetchJson("GET", listing)).body.installed).toBeNull()
    }), { timeout: 120_000 })
})
