/**
 * Provenance attestations as npm's registry serves them, for the registry stand-in: Sigstore bundles around
 * in-toto statements about a package version's bytes.
 *
 * `bundle` makes one of the right shape whose signature is nobody's (for the checks made before Sigstore is
 * called, and for tests that look at what reaches a stand-in verifier). `signedAttestations` makes real ones:
 * the SLSA provenance signed through the test's own Sigstore (test/support/sigstore/MockSigstore.ts) and
 * npm's publish attestation signed with the stand-in registry's key, both logged in its Rekor; the product's
 * verifier accepts them when given that Sigstore's trusted root.
 */
import type { KeyObject } from "node:crypto"
import { purl } from "../../../layers/registry/Provenance.js"
import type { MockSigstore } from "../sigstore/MockSigstore.js"
import { integrityOf } from "./Tarballs.js"

export const slsa = "https://slsa.dev/provenance/v1"
export const publishAttestation = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"

export interface Subject {
  readonly name: string
  readonly sha512: string
}

/** The subject an honest statement about `name@version` with these bytes names. */
export const honestSubject = (name: string, version: string, bytes: Buffer): Subject => ({
  name: purl(name, version),
  sha512: Buffer.from(integrityOf(bytes).slice("sha512-".length), "base64").toString("hex")
})

/** A Sigstore bundle of the form npm serves; `keyid` names a registry key (npm's publish attestation). */
export const bundle = (subject: Subject, predicateType: string, keyid = "") => ({
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

/** The attestations document of `bundles` (`[predicateType, bundle]`). */
export const attestations = (bundles: ReadonlyArray<readonly [string, unknown]>) => ({
  attestations: bundles.map(([predicateType, bundle]) => ({ predicateType, bundle }))
})

/** The in-toto statement of npm's publish attestation about `subject`. */
export const publishStatement = (subject: Subject, name: string, version: string) => ({
  _type: "https://in-toto.io/Statement/v1",
  subject: [{ name: subject.name, digest: { sha512: subject.sha512 } }],
  predicateType: publishAttestation,
  predicate: { name, version, registry: "https://registry.example.test" }
})

/**
 * npm's two attestations for `name@version` with these bytes, signed for real: the SLSA provenance through
 * `sigstore`'s CA and Rekor, the publish attestation with the registry's key (`keyid` its hint).
 */
export const signedAttestations = async (
  sigstore: MockSigstore,
  registryKey: { readonly keyid: string; readonly privateKey: KeyObject },
  name: string,
  version: string,
  bytes: Buffer
) => {
  const subject = honestSubject(name, version, bytes)
  return attestations([
    [slsa, await sigstore.provenance({ name, version, sha512: subject.sha512 })],
    [publishAttestation, await sigstore.publishAttestation(publishStatement(subject, name, version), registryKey)]
  ])
}
