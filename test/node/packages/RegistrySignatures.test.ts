/**
 * Registry signatures and provenance attestations, served by the stand-in registry. Signatures are real:
 * an ECDSA P-256 key made per test run, published on the keys endpoint, signing as npm's registry signs.
 *
 * Provenance here: the bundles' shape and in-toto subject (checked before Sigstore is called), that the
 * registry key a bundle names reaches the verifier, that a verifier's refusal refuses the package, and that
 * the real Sigstore verifier refuses a well-formed bundle whose signature is nobody's. Bundles signed for
 * real and verified by the product's verifier (passing and tampered): SigstoreProvenance.test.ts.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as HttpRegistryPackages from "../../../layers/registry/HttpRegistryPackages.js"
import { purl, type VerifyBundle } from "../../../layers/registry/Provenance.js"
import * as Registry from "../../support/registry/Registry.js"
import { integrityOf, packFolder } from "../../support/registry/Tarballs.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const source = path.resolve(here, "../../../examples/packages/harbour-theme")
const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "clark-signatures-"))

const packages = (url: string, verifyBundle?: VerifyBundle) =>
  HttpRegistryPackages.make({
    registryUrl: Option.some(new URL(url)),
    tufCachePath: temp(),
    ...(verifyBundle === undefined ? {} : { verifyBundle })
  })

const staging = () => {
  const parent = temp()
  return { parent, into: path.join(parent, "staging") }
}

const refusal = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (outcome) => (Either.isLeft(outcome) ? outcome.left : "accepted"))

const test = (name: string, body: () => Effect.Effect<void, unknown, any>) =>
  it.scoped(name, () => body().pipe(Effect.provide(NodeHttpClient.layerUndici)), { timeout: 60_000 })

const tarball = () => Effect.promise(() => packFolder(source))
const tarballPath = (name: string, version: string) => `/${name}/-/${name}-${version}.tgz`

const slsa = "https://slsa.dev/provenance/v1"
const publishAttestation = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"

/** A Sigstore bundle of the form npm serves, around an in-toto statement about `subject`. */
const bundle = (subject: { readonly name: string; readonly sha512: string }, predicateType: string, keyid = "") => ({
  mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
  verificationMaterial: keyid === "" ? { certificate: { rawBytes: "AAAA" }, tlogEntries: [] } : { publicKey: { hint: keyid }, tlogEntries: [] },
  dsseEnvelope: {
    payload: Buffer.from(JSON.stringify({
      _type: "https://in-toto.io/Statement/v1",
      subject: [{ name: subject.name, digest: { sha512: subject.sha512 } }],
      predicateType,
      predicate: {}
    })).toString("base64"),
    payloadType: "application/vnd.in-toto+json",
    signatures: [{ sig: Buffer.from("not a real signature").toString("base64"), keyid }]
  }
})

const sha512Hex = (bytes: Buffer) => Buffer.from(integrityOf(bytes).slice("sha512-".length), "base64").toString("hex")

describe("registry signatures", () => {
  test("a valid signature with the registry's published key is verified", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const bytes = yield* tarball()
      registry.publish({ name: "signed", version: "1.0.0", tarball: bytes, sign: "valid" })
      const unpacked = yield* (yield* packages(registry.url)).unpack({ name: "signed", into: staging().into })
      expect(unpacked).toMatchObject({ signatures: "verified", provenance: "absent", integrity: integrityOf(bytes) })
      expect(registry.requests).toContain("/-/npm/v1/keys")
    }))

  test("no signatures read absent, and the keys are not even asked for", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.publish({ name: "unsigned", version: "1.0.0", tarball: yield* tarball() })
      expect(yield* (yield* packages(registry.url)).unpack({ name: "unsigned", into: staging().into })).toMatchObject({ signatures: "absent" })
      expect(registry.requests).not.toContain("/-/npm/v1/keys")
    }))

  const refusals: ReadonlyArray<readonly [string, NonNullable<Registry.Publish["sign"]>, { readonly expires: string | null } | "none", string | undefined, object]> = [
    ["a signature over other bytes", "wrong", { expires: null }, undefined, { problem: "the signature does not verify" }],
    ["a key the registry does not publish", "unknown-key", { expires: null }, undefined, { keyid: "SHA256:unknown" }],
    ["a key that expired before the version was published", "valid", { expires: "2020-01-01T00:00:00.000Z" }, "2021-01-01T00:00:00.000Z", { problem: "the key expired before this version was published" }],
    ["signed, but no keys endpoint", "valid", "none", undefined, { problem: "signed, but the registry publishes no keys" }]
  ]
  for (const [kind, sign, keys, time, expected] of refusals) {
    test(`${kind} refuses the package before its tarball is fetched`, () =>
      Effect.gen(function*() {
        const registry = yield* Registry.start
        registry.publish({ name: "signed", version: "1.0.0", tarball: yield* tarball(), sign, ...(time === undefined ? {} : { time }) })
        registry.setKeys(keys)
        const { parent, into } = staging()
        expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "signed", into }))).toMatchObject({
          _tag: "SignatureInvalid", name: "signed", version: "1.0.0", ...expected
        })
        expect(fs.readdirSync(parent)).toEqual([])
        expect(registry.requests).not.toContain(tarballPath("signed", "1.0.0"))
      }))
  }

  test("a key that expired after the version was published still verifies it", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      registry.publish({ name: "signed", version: "1.0.0", tarball: yield* tarball(), sign: "valid", time: "2021-01-01T00:00:00.000Z" })
      registry.setKeys({ expires: "2022-01-01T00:00:00.000Z" })
      expect(yield* (yield* packages(registry.url)).unpack({ name: "signed", into: staging().into })).toMatchObject({ signatures: "verified" })
    }))
})

describe("provenance attestations", () => {
  const attested = (registry: Registry.Registry, bytes: Buffer, bundles: ReadonlyArray<readonly [string, unknown]>) =>
    registry.publish({
      name: "attested",
      version: "1.0.0",
      tarball: bytes,
      sign: "valid",
      attestations: { attestations: bundles.map(([predicateType, bundle]) => ({ predicateType, bundle })) }
    })
  const honest = (bytes: Buffer) => ({ name: purl("attested", "1.0.0"), sha512: sha512Hex(bytes) })

  test("verified when every bundle is about these bytes and the verifier accepts it; the publish one gets the registry key", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const bytes = yield* tarball()
      attested(registry, bytes, [[slsa, bundle(honest(bytes), slsa)], [publishAttestation, bundle(honest(bytes), publishAttestation, registry.key.keyid)]])
      const keysSeen: Array<string | undefined> = []
      const unpacked = yield* (yield* packages(registry.url, async (_bundle, key) => void keysSeen.push(key))).unpack({ name: "attested", into: staging().into })
      expect(unpacked).toMatchObject({ signatures: "verified", provenance: "verified" })
      expect(keysSeen).toEqual([undefined, `-----BEGIN PUBLIC KEY-----\n${registry.key.key}\n-----END PUBLIC KEY-----`])
    }))

  test("npm's publish attestation alone is no provenance: absent", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const bytes = yield* tarball()
      attested(registry, bytes, [[publishAttestation, bundle(honest(bytes), publishAttestation, registry.key.keyid)]])
      expect(yield* (yield* packages(registry.url, async () => {})).unpack({ name: "attested", into: staging().into })).toMatchObject({ provenance: "absent" })
    }))

  const invalid: ReadonlyArray<readonly [string, (bytes: Buffer, keyid: string) => unknown, string]> = [
    ["a malformed bundle", () => ({ attestations: [{ predicateType: slsa, bundle: { mediaType: "text/plain" } }] }), "a Sigstore bundle is malformed"],
    ["a bundle whose payload is not a statement", (bytes) => ({
      attestations: [{ predicateType: slsa, bundle: { ...bundle(honest(bytes), slsa), dsseEnvelope: { ...bundle(honest(bytes), slsa).dsseEnvelope, payload: Buffer.from("{").toString("base64") } } }]
    }), "a bundle's statement is malformed"],
    ["a statement about other bytes", (bytes) => ({ attestations: [{ predicateType: slsa, bundle: bundle({ ...honest(bytes), sha512: "00" }, slsa) }] }), "a statement is about another package or other bytes"],
    ["a statement about another package", (bytes) => ({ attestations: [{ predicateType: slsa, bundle: bundle({ ...honest(bytes), name: purl("other", "1.0.0") }, slsa) }] }), "a statement is about another package or other bytes"],
    ["a statement of another predicate than listed", (bytes) => ({ attestations: [{ predicateType: slsa, bundle: bundle(honest(bytes), publishAttestation) }] }), "a statement's predicate is not the one listed"],
    ["a bundle naming a key the registry does not publish", (bytes) => ({ attestations: [{ predicateType: slsa, bundle: bundle(honest(bytes), slsa, "SHA256:other") }] }), "a bundle names a key the registry does not publish"],
    ["an empty attestations list", () => ({ attestations: [] }), "attestations are listed but none is served"],
    ["a document that is not an attestations list", () => ({ bundles: "none" }), "the attestations document is malformed"]
  ]
  for (const [kind, document, problem] of invalid) {
    test(`${kind} refuses the package before its tarball is fetched, without calling Sigstore`, () =>
      Effect.gen(function*() {
        const registry = yield* Registry.start
        const bytes = yield* tarball()
        registry.publish({ name: "attested", version: "1.0.0", tarball: bytes, attestations: document(bytes, registry.key.keyid) })
        let called = false
        const { parent, into } = staging()
        expect(yield* refusal((yield* packages(registry.url, async () => void (called = true))).unpack({ name: "attested", into }))).toMatchObject({
          _tag: "ProvenanceInvalid", name: "attested", version: "1.0.0", problem
        })
        expect(called).toBe(false)
        expect(fs.readdirSync(parent)).toEqual([])
        expect(registry.requests).not.toContain(tarballPath("attested", "1.0.0"))
      }))
  }

  test("a bundle the verifier refuses refuses the package", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const bytes = yield* tarball()
      attested(registry, bytes, [[slsa, bundle(honest(bytes), slsa)]])
      const { parent, into } = staging()
      const refusing: VerifyBundle = () => Promise.reject(Object.assign(new Error("signature mismatch"), { name: "VerificationError" }))
      expect(yield* refusal((yield* packages(registry.url, refusing)).unpack({ name: "attested", into }))).toMatchObject({
        _tag: "ProvenanceInvalid", problem: "Sigstore refused a bundle (VerificationError)"
      })
      expect(fs.readdirSync(parent)).toEqual([])
    }))

  test("the real Sigstore verifier refuses a well-formed bundle that Sigstore never signed", () =>
    Effect.gen(function*() {
      const registry = yield* Registry.start
      const bytes = yield* tarball()
      attested(registry, bytes, [[publishAttestation, bundle(honest(bytes), publishAttestation, registry.key.keyid)]])
      const { parent, into } = staging()
      expect(yield* refusal((yield* packages(registry.url)).unpack({ name: "attested", into }))).toMatchObject({ _tag: "ProvenanceInvalid" })
      expect(fs.readdirSync(parent)).toEqual([])
    }))
})
