/**
 * What can keep a package from being read or installed, as the package
 * services see it. None of these knows an HTTP status: the node's one mapping
 * module (src/node/http/Errors.ts) turns each into its wire code.
 */
import { Schema } from "effect"

/**
 * The package's `package.json` or its `clark` manifest is not one the node can
 * run. `path` names the first problem (`clark.tools[0].risk`), `problem` says
 * what is wrong with it; neither holds a value from the file beyond its shape.
 */
export class ManifestInvalid extends Schema.TaggedError<ManifestInvalid>()("ManifestInvalid", {
  path: Schema.String,
  problem: Schema.String
}) {}

/** A `manifestVersion` this node does not read: refused before any other field is looked at. */
export class ManifestVersionUnsupported extends Schema.TaggedError<ManifestVersionUnsupported>()(
  "ManifestVersionUnsupported",
  { found: Schema.String, supported: Schema.Int }
) {}

export type ManifestError = ManifestInvalid | ManifestVersionUnsupported

/** Why a local folder (or an unpacked tarball) cannot be a package. */
export const UnreadableReason = Schema.Literal(
  "not-a-folder",
  "too-many-files",
  "too-many-folders",
  "too-deep",
  "too-large",
  "link",
  "special-file",
  "unreadable"
)

/**
 * The folder cannot be read as a package: over a limit, a symbolic or hard link, a device or socket, or a
 * file the node may not read. `path` is relative to the folder (never the person's absolute path).
 */
export class LocalSourceUnreadable extends Schema.TaggedError<LocalSourceUnreadable>()("LocalSourceUnreadable", {
  reason: UnreadableReason,
  path: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.Number)
}) {}

/** The bytes are not the ones listed or approved: `expected` was asked for, `actual` was found. */
export class DigestMismatch extends Schema.TaggedError<DigestMismatch>()("DigestMismatch", {
  expected: Schema.String,
  actual: Schema.String
}) {}

/** The package cache could not be written (full, read-only, missing); nothing was installed. */
export class PackageCacheUnavailable extends Schema.TaggedError<PackageCacheUnavailable>()("PackageCacheUnavailable", {
  detail: Schema.String
}) {}

/** The directory lists no package of this id. */
export class PackageNotListed extends Schema.TaggedError<PackageNotListed>()("PackageNotListed", {
  packageId: Schema.String
}) {}

/** The install request is missing what its listing needs (a local package's `localDigest`). */
export class InstallRequestInvalid extends Schema.TaggedError<InstallRequestInvalid>()("InstallRequestInvalid", {
  field: Schema.String,
  problem: Schema.String
}) {}

/** The manifest reaches outside the sandbox further than its listing showed (rule 7). */
export class DeclaredReachMismatch extends Schema.TaggedError<DeclaredReachMismatch>()("DeclaredReachMismatch", {
  undeclared: Schema.Array(Schema.Struct({ kind: Schema.String, value: Schema.String, access: Schema.NullOr(Schema.String) }))
}) {}

/** The install policy (`execution.installs`) refuses installs. */
export class InstallPolicyRefused extends Schema.TaggedError<InstallPolicyRefused>()("InstallPolicyRefused", {
  mode: Schema.String
}) {}

export class ApprovalNotFound extends Schema.TaggedError<ApprovalNotFound>()("ApprovalNotFound", {
  approvalId: Schema.String
}) {}

/** The decision's digest is not the `operationDigest` the person was asked about. */
export class ApprovalForged extends Schema.TaggedError<ApprovalForged>()("ApprovalForged", {
  approvalId: Schema.String
}) {}

export class ApprovalAlreadyDecided extends Schema.TaggedError<ApprovalAlreadyDecided>()("ApprovalAlreadyDecided", {
  approvalId: Schema.String,
  status: Schema.String
}) {}

export class ApprovalExpired extends Schema.TaggedError<ApprovalExpired>()("ApprovalExpired", {
  approvalId: Schema.String
}) {}

export type InstallError =
  | PackageNotListed
  | InstallRequestInvalid
  | LocalSourceUnreadable
  | DigestMismatch
  | PackageCacheUnavailable
  | ManifestError
  | DeclaredReachMismatch
  | InstallPolicyRefused
  | RegistryPackageError

export type ApprovalError = InstallError | ApprovalNotFound | ApprovalForged | ApprovalAlreadyDecided | ApprovalExpired

/*
 * Registry packages (a package fetched from the configured npm registry). None of these carries the
 * registry's URL (it may hold credentials) or a path on this machine: only the package's name and version,
 * and paths inside the tarball.
 */

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
