/**
 * What can keep a package from being read or installed, as the package
 * services see it. None of these knows an HTTP status: the node's one mapping
 * module (src/node/http/Errors.ts) turns each into its wire code.
 */
import { Schema } from "effect"
import type { RegistryPackageError } from "../registry/RegistryErrors.js"

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

// The registry's errors are shared with the marketplace's indexer: they live in services/registry.
export {
  IntegrityMismatch,
  PackageNotInRegistry,
  ProvenanceInvalid,
  RegistryNotConfigured,
  type RegistryPackageError,
  RegistryStage,
  RegistryUnavailable,
  SignatureInvalid,
  TarballRefusal,
  TarballRefused
} from "../registry/RegistryErrors.js"
