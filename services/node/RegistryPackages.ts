/**
 * Packages from the configured npm registry: the packument is read, the version picked, its tarball
 * downloaded within the package limits and checked against `dist.integrity` before anything is unpacked,
 * then unpacked into a staging folder the caller owns. Signatures and provenance are verified when the
 * registry publishes them, and the answer says which were: absence is never reported as verification.
 */
import { Context, type Effect } from "effect"
import type { RegistryPackageError } from "./PackageErrors.js"

export interface RegistryRequest {
  readonly name: string
  /** An exact version; absent means the packument's `latest` dist-tag. */
  readonly version?: string | undefined
  /**
   * A folder that does not exist yet (or is empty), in a parent nobody else can write: the package's files
   * land directly in it (npm's `package/` prefix stripped). Left absent or empty when anything is refused.
   */
  readonly into: string
}

export interface RegistryPackage {
  readonly folder: string
  readonly name: string
  readonly version: string
  /** The packument's `dist.integrity` (`sha512-…`), verified on the downloaded bytes. */
  readonly integrity: string
  readonly signatures: "verified" | "absent"
  readonly provenance: "verified" | "absent"
}

export class RegistryPackages extends Context.Tag("clark/node/RegistryPackages")<RegistryPackages, {
  readonly unpack: (request: RegistryRequest) => Effect.Effect<RegistryPackage, RegistryPackageError>
}>() {}
