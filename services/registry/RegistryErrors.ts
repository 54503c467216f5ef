/**
 * What can go wrong reading a package from the configured npm registry, shared by the node's installer and
 * the marketplace's indexer. None of these carries the registry's URL (it may hold credentials) or a path on
 * this machine: only the package's name and version, and paths inside the tarball.
 */
import { Schema } from "effect"

/** No registry URL is configured, so no package can come from a registry. `setting` names what to set. */
export class RegistryNotConfigured extends Schema.TaggedError<RegistryNotConfigured>()("RegistryNotConfigured", {
  setting: Schema.String
}) {}

/** What the node was asking the registry for when it failed. */
export const RegistryStage = Schema.Literal("packument", "keys", "attestations", "tarball")

/**
 * The registry could not be reached or answered something other than the document asked for: refused
 * connection, timeout, an unexpected status (`status`), or a body that is not the document (`problem`).
 */
export class RegistryUnavailable extends Schema.TaggedError<RegistryUnavailable>()("RegistryUnavailable", {
  name: Schema.String,
  stage: RegistryStage,
  status: Schema.optional(Schema.Int),
  problem: Schema.String
}) {}

/** The registry has no such package (404, or a name npm could never publish), or not that version. */
export class PackageNotInRegistry extends Schema.TaggedError<PackageNotInRegistry>()("PackageNotInRegistry", {
  name: Schema.String,
  version: Schema.optional(Schema.String)
}) {}

/**
 * The tarball's bytes do not hash to the packument's `dist.integrity` (sha512), or the packument gives no
 * sha512 integrity at all (`expected: "none"`). Checked before anything is unpacked.
 */
export class IntegrityMismatch extends Schema.TaggedError<IntegrityMismatch>()("IntegrityMismatch", {
  name: Schema.String,
  version: Schema.String,
  expected: Schema.String,
  actual: Schema.String
}) {}

/** Why a registry tarball is not unpacked. */
export const TarballRefusal = Schema.Literal(
  "link",
  "path-escape",
  "special-file",
  "too-large",
  "too-many-files",
  "too-many-folders",
  "too-deep",
  "ratio",
  "malformed"
)

/**
 * The tarball holds something a package may not, or is larger than a package may be (compressed, once
 * decompressed, or by its decompression ratio). `path` is the entry's name inside the tarball, `limit` the
 * limit crossed. Nothing of the tarball is left unpacked.
 */
export class TarballRefused extends Schema.TaggedError<TarballRefused>()("TarballRefused", {
  name: Schema.String,
  version: Schema.String,
  reason: TarballRefusal,
  path: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.Number)
}) {}

/**
 * The packument carries registry signatures and one does not verify: a wrong signature, a key the registry
 * does not publish, or a key that expired before the version was published.
 */
export class SignatureInvalid extends Schema.TaggedError<SignatureInvalid>()("SignatureInvalid", {
  name: Schema.String,
  version: Schema.String,
  keyid: Schema.optional(Schema.String),
  problem: Schema.String
}) {}

/**
 * The packument lists provenance attestations and they do not hold: a malformed Sigstore bundle, a statement
 * about another package or other bytes, or a signature Sigstore does not verify.
 */
export class ProvenanceInvalid extends Schema.TaggedError<ProvenanceInvalid>()("ProvenanceInvalid", {
  name: Schema.String,
  version: Schema.String,
  problem: Schema.String
}) {}

export type RegistryPackageError =
  | RegistryNotConfigured
  | RegistryUnavailable
  | PackageNotInRegistry
  | IntegrityMismatch
  | TarballRefused
  | SignatureInvalid
  | ProvenanceInvalid
