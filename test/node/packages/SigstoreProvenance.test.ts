/**
 * Provenance verified for real: the registry stand-in serves a version with npm's two attestations, signed
 * through the test's own Sigstore (a Fulcio CA with its CT log, a Rekor, over local HTTP; see
 * test/support/sigstore/MockSigstore.ts), and the node's registry layer verifies them with the product's
 * verifier (layers/registry/Sigstore.ts), given that Sigstore's trusted root as a file, as
 * `CC_SIGSTORE_TRUSTED_ROOT` gives it. Nothing is stubbed between the bundle and `@sigstore/verify`.
 *
 * Each way a bundle is altered after signing is refused by Sigstore itself, with the check that failed in the
 * problem, before the tarball is fetched; and the same honest bundles are refused under the default trust
 * root (Sigstore's, through TUF), so the test root is what makes them pass, not a way around the checks.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as HttpRegistryPackages from "../../../layers/registry/HttpRegistryPackages.js"
import {
  attestations,
  honestSubject,
  publishAttestation,
  publishStatement,
  signedAttestations,
  slsa
} from "../../support/registry/Attestations.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"
import * as MockSigstore from "../../support/sigstore/MockSigstore.js"
import { flipSignature, rewriteStatement, withoutSET } from "../../support/sigstore/Tamper.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const source = path.resolve(here, "../../../examples/packages/harbour-theme")
const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "clark-provenance-"))
const name = "attested"
const version = "1.0.0"
const tarballPath = `/${name}/-/${name}-${version}.tgz`

/** The product's registry layer; `trustedRootPath` undefined: Sigstore's TUF root (from the seeded cache). */
const packages = (url: string, trustedRootPath: string | undefined) =>
  HttpRegistryPackages.make({
    registryUrl: Option.some(new URL(url)),
    tufCachePath: temp(),
    ...(trustedRootPath === undefined ? {} : { trustedRootPath })
  })

const staging = () => {
  const parent = temp()
  return { parent, into: path.join(parent, "staging") }
}

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (outcome) => (Either.isLeft(outcome) ? outcome.left : "accepted"))

const test = (title: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scoped(title, () => body().pipe(Effect.provide(NodeHttpClient.layerUndici)), { timeout: 60_000 })

const setup = Effect.gen(function*() {
  const registry = yield* Registry.start
  const sigstore = yield* MockSigstore.start
  const bytes = yield* Effect.promise(() => packFolder(source))
  const subject = honestSubject(name, version, bytes)
  const publish = (document: unknown) => registry.publish({ name, version, tarball: bytes, sign: "valid", attestations: document })
  return { registry, sigstore, bytes, subject, publish }
})

describe("provenance signed through a real Sigstore flow", () => {
  test("npm's two attestations, signed for real, verify: provenance and signatures verified", () =>
    Effect.gen(function*() {
      const { bytes, publish, registry, sigstore } = yield* setup
      publish(yield* Effect.promise(() => signedAttestations(sigstore, registry.key, name, version, bytes)))
      // The bundles really went through this Fulcio (a certificate with an SCT) and Rekor (an entry, its SET).
      expect(sigstore.requests).toEqual(["/api/v2/signingCert", "/api/v1/log/entries", "/api/v1/log/entries"])
      const unpacked = yield* (yield* packages(registry.url, sigstore.trustedRootPath)).unpack({ name, into: staging().into })
      expect(unpacked).toMatchObject({ provenance: "verified", signatures: "verified", integrity: integrityOf(bytes) })
      expect(registry.requests).toContain(tarballPath)
    }))

  test("npm's publish attestation alone verifies with the registry key, and is no provenance: absent", () =>
    Effect.gen(function*() {
      const { publish, registry, sigstore, subject } = yield* setup
      const bundle = yield* Effect.promise(() => sigstore.publishAttestation(publishStatement(subject, name, version), registry.key))
      publish(attestations([[publishAttestation, bundle]]))
      expect(yield* (yield* packages(registry.url, sigstore.trustedRootPath)).unpack({ name, into: staging().into })).toMatchObject({
        provenance: "absent",
        signatures: "verified"
      })
    }))

  test("under Sigstore's own trust root (TUF, the default) the same honest bundles are refused", () =>
    Effect.gen(function*() {
      const { bytes, publish, registry, sigstore } = yield* setup
      publish(yield* Effect.promise(() => signedAttestations(sigstore, registry.key, name, version, bytes)))
      const { parent, into } = staging()
      const refused = yield* refusal((yield* packages(registry.url, undefined)).unpack({ name, into }))
      expect(refused).toMatchObject({ _tag: "ProvenanceInvalid", name, version })
      // Sigstore's CA and logs never signed them; offline, an expired seeded TUF root may refuse before that.
      expect((refused as { problem: string }).problem).toMatch(
        /^(Sigstore refused a bundle \(VerificationError: [A-Z_]+\)|Sigstore's trust root could not be read \(TUFError\))$/
      )
      expect(fs.readdirSync(parent)).toEqual([])
      expect(registry.requests).not.toContain(tarballPath)
    }))

  test("a configured trusted root that cannot be read refuses the bundles: unverifiable is not absent", () =>
    Effect.gen(function*() {
      const { bytes, publish, registry, sigstore } = yield* setup
      publish(yield* Effect.promise(() => signedAttestations(sigstore, registry.key, name, version, bytes)))
      const { parent, into } = staging()
      const missing = path.join(temp(), "no-trusted-root.json")
      expect(yield* refusal((yield* packages(registry.url, missing)).unpack({ name, into }))).toMatchObject({
        _tag: "ProvenanceInvalid",
        problem: "the configured Sigstore trusted root could not be read (TrustedRootUnreadable)"
      })
      expect(fs.readdirSync(parent)).toEqual([])
      expect(registry.requests).not.toContain(tarballPath)
    }))

  const other = Buffer.from("other bytes")
  const tampered: ReadonlyArray<readonly [string, (context: Effect.Effect.Success<typeof setup>) => Promise<object>, string]> = [
    [
      "a statement rewritten after signing to name the served bytes",
      async ({ sigstore, subject }) => {
        const signed = await sigstore.provenance({ name, version, sha512: honestSubject(name, version, other).sha512 })
        return rewriteStatement(signed, MockSigstore.provenanceStatement({ name, version, sha512: subject.sha512 }))
      },
      "Sigstore refused a bundle (VerificationError: TLOG_BODY_ERROR)"
    ],
    [
      "signature bytes flipped",
      async ({ sigstore, subject }) => flipSignature(await sigstore.provenance({ name, version, sha512: subject.sha512 })),
      "Sigstore refused a bundle (VerificationError: TLOG_BODY_ERROR)"
    ],
    [
      "a certificate from a CA the trust root does not name",
      ({ sigstore, subject }) => sigstore.provenance({ name, version, sha512: subject.sha512 }, { rogueCA: true }),
      "Sigstore refused a bundle (VerificationError: CERTIFICATE_ERROR)"
    ],
    [
      "the transparency log's signed entry timestamp removed",
      async ({ sigstore, subject }) => withoutSET(await sigstore.provenance({ name, version, sha512: subject.sha512 })),
      "Sigstore refused a bundle (VerificationError: TIMESTAMP_ERROR)"
    ]
  ]
  for (const [kind, make, problem] of tampered) {
    test(`${kind}: refused by Sigstore, before the tarball is fetched`, () =>
      Effect.gen(function*() {
        const context = yield* setup
        context.publish(attestations([[slsa, yield* Effect.promise(() => make(context))]]))
        const { parent, into } = staging()
        expect(yield* refusal((yield* packages(context.registry.url, context.sigstore.trustedRootPath)).unpack({ name, into }))).toMatchObject({
          _tag: "ProvenanceInvalid",
          name,
          version,
          problem
        })
        expect(fs.readdirSync(parent)).toEqual([])
        expect(context.registry.requests).not.toContain(tarballPath)
      }))
  }

  test("a publish attestation naming the registry key but signed with another key is refused", () =>
    Effect.gen(function*() {
      const { publish, registry, sigstore, subject } = yield* setup
      const impostor = { ...Registry.makeKey(), keyid: registry.key.keyid }
      publish(attestations([[publishAttestation, yield* Effect.promise(() => sigstore.publishAttestation(publishStatement(subject, name, version), impostor))]]))
      const { parent, into } = staging()
      expect(yield* refusal((yield* packages(registry.url, sigstore.trustedRootPath)).unpack({ name, into }))).toMatchObject({
        _tag: "ProvenanceInvalid",
        problem: "Sigstore refused a bundle (VerificationError: SIGNATURE_ERROR)"
      })
      expect(fs.readdirSync(parent)).toEqual([])
    }))
})
