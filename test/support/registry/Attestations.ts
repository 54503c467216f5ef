/**
 * Provenance attestations as npm's registry serves them, for the registry stand-in: Sigstore bundles around
 * in-toto statements about a package version's bytes. The signatures in them are not Sigstore's (a real one
 * needs Sigstore's CA and transparency log, out of reach offline), so a test either verifies them with a
 * stand-in verifier or shows the real verifier refusing them.
 */
import { purl } from "../../../layers/registry/Provenance.js"
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
