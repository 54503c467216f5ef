/**
 * Wire codes of package reading, installing, registry packages and install approvals (docs/decisions.md,
 * "Packages: manifest, directory, install and approvals" and "Registry packages"), spread into the node's one
 * mapping (../Errors.ts).
 */
import type { NodeError } from "../../../../schema/node/Errors.js"
import type { ApprovalError, UnreadableReason } from "../../../../services/node/PackageErrors.js"
import { quote, refuse } from "./Refuse.js"

/** Why a folder or unpacked package cannot be read, as a sentence (the members carry the details). */
const unreadableMessages: Record<typeof UnreadableReason.Type, string> = {
  "not-a-folder": "The path is not a folder this node can read (an absolute path to a folder is needed)",
  "too-many-files": "The package has more files than the node installs",
  "too-many-folders": "The package has more folders than the node installs",
  "too-deep": "The package's folders nest deeper than the node installs",
  "too-large": "The package is larger than the node installs",
  link: "The package contains a symbolic or hard link",
  "special-file": "The package contains something that is neither a file nor a folder",
  unreadable: "A file of the package cannot be read"
}

/** One entry per package error: the compiler refuses one left unmapped. */
export const packageRefusals: { readonly [Tag in ApprovalError["_tag"]]: (error: Extract<ApprovalError, { readonly _tag: Tag }>) => NodeError } = {
  LocalSourceUnreadable: (e) =>
    refuse("LOCAL_SOURCE_UNREADABLE", unreadableMessages[e.reason], {
      reason: e.reason,
      ...(e.path === undefined ? {} : { path: e.path }),
      ...(e.limit === undefined ? {} : { limit: e.limit })
    }),
  ManifestInvalid: (e) =>
    refuse("LOCAL_SOURCE_UNREADABLE", `package.json: ${e.path === "" ? "" : `${e.path} `}${e.problem}`, {
      reason: "manifest",
      path: e.path,
      problem: e.problem
    }),
  ManifestVersionUnsupported: (e) =>
    refuse("LOCAL_SOURCE_UNREADABLE", `manifestVersion ${e.found} is not one this node reads (it reads ${e.supported})`, {
      reason: "manifest-version",
      path: "clark.manifestVersion"
    }),
  DigestMismatch: (e) =>
    refuse("DIGEST_MISMATCH", "The package's files are not the ones listed or approved", {
      expected: e.expected,
      actual: e.actual
    }),
  PackageCacheUnavailable: (e) =>
    refuse("PACKAGE_CACHE_UNAVAILABLE", `The package cache cannot be written (${e.detail}); nothing was installed`),
  PackageNotListed: (e) => refuse("RESOURCE_NOT_FOUND", `The directory lists no package ${quote(e.packageId)}`),
  InstallRequestInvalid: (e) => refuse("INVALID_INPUT", `${e.field}: ${e.problem}`, { field: e.field }),
  DeclaredReachMismatch: (e) =>
    refuse("DECLARED_REACH_MISMATCH", "The package declares outside reach its listing did not show", {
      undeclared: e.undeclared
    }),
  InstallPolicyRefused: (e) => refuse("POLICY_REFUSED", `The install policy (execution.installs: ${e.mode}) refuses installs`),
  // Registry packages
  RegistryNotConfigured: (e) =>
    refuse("SERVICE_UNREACHABLE", `No npm registry is set (${e.setting}): registry packages cannot be installed`),
  RegistryUnavailable: (e) =>
    refuse("SERVICE_UNREACHABLE", `The registry did not answer for ${quote(e.name)} (${e.stage}): ${e.problem}`),
  PackageNotInRegistry: (e) =>
    refuse("RESOURCE_NOT_FOUND", `The registry has no ${quote(e.version === undefined ? e.name : `${e.name}@${e.version}`)}`),
  IntegrityMismatch: (e) =>
    refuse("DIGEST_MISMATCH", "The registry's tarball does not match its integrity", { expected: e.expected, actual: e.actual }),
  TarballRefused: (e) =>
    refuse("LOCAL_SOURCE_UNREADABLE", `The package's tarball was refused (${e.reason})`, {
      reason: e.reason,
      ...(e.path === undefined ? {} : { path: e.path }),
      ...(e.limit === undefined ? {} : { limit: e.limit })
    }),
  SignatureInvalid: (e) => refuse("POLICY_REFUSED", `The registry signature does not verify: ${e.problem}`, { reason: "signature" }),
  ProvenanceInvalid: (e) =>
    refuse("POLICY_REFUSED", `The provenance attestation does not verify: ${e.problem}`, { reason: "provenance" }),
  ApprovalNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No approval ${quote(e.approvalId)}`),
  ApprovalForged: () => refuse("APPROVAL_FORGED", "The digest is not the one this approval asked about"),
  ApprovalAlreadyDecided: (e) =>
    refuse("APPROVAL_ALREADY_DECIDED", `The approval was already decided (${e.status})`, { status: e.status }),
  ApprovalExpired: () => refuse("APPROVAL_EXPIRED", "The approval expired before it was decided; nothing it asked for was done"),
}
