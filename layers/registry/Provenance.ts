/**
 * Provenance attestations, checked as npm's client checks them (pacote's `lib/registry.js`): the registry
 * serves Sigstore bundles for the version; each bundle's in-toto statement must be about this package's
 * purl and these bytes (the sha512 of `dist.integrity`), and Sigstore must verify the bundle: npm's publish
 * attestation with the registry key its signature names, the SLSA provenance with its certificate and the
 * transparency log of Sigstore's trust root.
 *
 * The shape and subject are checked here before Sigstore is called, so a malformed or misdirected bundle
 * is refused without any network use; the cryptographic verification is `verifyBundle` (Sigstore.ts: the
 * product's reads Sigstore's trust root through TUF, or a trusted-root file when one is configured).
 */
import { Effect, Schema } from "effect"
import { ProvenanceInvalid } from "../../services/registry/RegistryErrors.js"
import type { RegistryKey } from "./Packument.js"

export const slsaPredicatePrefix = "https://slsa.dev/provenance/"

const DsseEnvelope = Schema.Struct({
  payload: Schema.String,
  payloadType: Schema.Literal("application/vnd.in-toto+json"),
  signatures: Schema.NonEmptyArray(Schema.Struct({ sig: Schema.String, keyid: Schema.optional(Schema.String) }))
})

const Bundle = Schema.Struct({
  mediaType: Schema.String.pipe(Schema.startsWith("application/vnd.dev.sigstore.bundle")),
  verificationMaterial: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  dsseEnvelope: DsseEnvelope
})

export const Attestations = Schema.Struct({
  attestations: Schema.Array(Schema.Struct({ predicateType: Schema.String, bundle: Schema.Unknown }))
})

const Statement = Schema.Struct({
  _type: Schema.String.pipe(Schema.startsWith("https://in-toto.io/Statement/")),
  subject: Schema.NonEmptyArray(Schema.Struct({
    name: Schema.String,
    digest: Schema.Struct({ sha512: Schema.String })
  })),
  predicateType: Schema.String
})

/** The package URL npm puts in a statement's subject: `pkg:npm/%40scope/name@1.0.0`. */
export const purl = (name: string, version: string) => `pkg:npm/${name.replace(/^@/, "%40")}@${version}`

/** Verifies one bundle cryptographically; `key` is the registry key (PEM) the bundle's signature names. */
export type VerifyBundle = (bundle: unknown, key: string | undefined) => Promise<unknown>

/**
 * The problem a verifier's refusal is reported as: its error's name and, for `@sigstore/verify`'s errors, the
 * code that says which check failed (CERTIFICATE_ERROR, TLOG_BODY_ERROR, TIMESTAMP_ERROR, SIGNATURE_ERROR, …).
 */
const refusal = (cause: unknown) => {
  const error = cause as { readonly name?: unknown; readonly code?: unknown } | undefined
  const name = typeof error?.name === "string" ? error.name : "error"
  // Unverifiable is not absent: without Sigstore's trust root (TUF) the bundle is refused too.
  if (name === "TUFError") return "Sigstore's trust root could not be read (TUFError)"
  if (name === "TrustedRootUnreadable") return "the configured Sigstore trusted root could not be read (TrustedRootUnreadable)"
  return typeof error?.code === "string" && /^[A-Z_]+$/.test(error.code)
    ? `Sigstore refused a bundle (${name}: ${error.code})`
    : `Sigstore refused a bundle (${name})`
}

export const pem = (key: RegistryKey) => `-----BEGIN PUBLIC KEY-----\n${key.key}\n-----END PUBLIC KEY-----`

export const verifyAttestations = (options: {
  readonly name: string
  readonly version: string
  readonly integrity: string
  readonly document: unknown
  readonly keys: ReadonlyArray<RegistryKey>
  readonly verifyBundle: VerifyBundle
}) =>
  Effect.gen(function*() {
    const { name, version } = options
    const invalid = (problem: string) => new ProvenanceInvalid({ name, version, problem })
    const { attestations } = yield* Schema.decodeUnknown(Attestations)(options.document).pipe(
      Effect.mapError(() => invalid("the attestations document is malformed"))
    )
    if (attestations.length === 0) return yield* invalid("attestations are listed but none is served")
    const sha512 = Buffer.from(options.integrity.slice("sha512-".length), "base64").toString("hex")
    let provenance = false
    for (const attestation of attestations) {
      const bundle = yield* Schema.decodeUnknown(Bundle)(attestation.bundle).pipe(
        Effect.mapError(() => invalid("a Sigstore bundle is malformed"))
      )
      const statement = yield* Effect.try(() => JSON.parse(Buffer.from(bundle.dsseEnvelope.payload, "base64").toString("utf8")) as unknown).pipe(
        Effect.flatMap(Schema.decodeUnknown(Statement)),
        Effect.mapError(() => invalid("a bundle's statement is malformed"))
      )
      if (statement.predicateType !== attestation.predicateType) return yield* invalid("a statement's predicate is not the one listed")
      const subject = statement.subject[0]
      if (subject.name !== purl(name, version) || subject.digest.sha512 !== sha512) {
        return yield* invalid("a statement is about another package or other bytes")
      }
      const keyid = bundle.dsseEnvelope.signatures[0].keyid
      const key = keyid === undefined || keyid === "" ? undefined : options.keys.find((candidate) => candidate.keyid === keyid)
      if (keyid !== undefined && keyid !== "" && key === undefined) return yield* invalid("a bundle names a key the registry does not publish")
      yield* Effect.tryPromise({
        try: () => options.verifyBundle(attestation.bundle, key === undefined ? undefined : pem(key)),
        catch: (cause) => invalid(refusal(cause))
      })
      if (attestation.predicateType.startsWith(slsaPredicatePrefix)) provenance = true
    }
    // npm's publish attestation alone says who uploaded, not where it was built: that is no provenance.
    return provenance ? "verified" as const : "absent" as const
  })
