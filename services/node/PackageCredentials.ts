/**
 * Package credentials (docs/decisions.md, "Package credentials"): secrets a package's service uses, kept by
 * the secret broker under a name bound to that package, and handed to that package's service only, as
 * environment variables of its process. The rules are the pure functions below; `PackageCredentials` is the
 * service the credential route, the connection flow and the service runtime's `grants` use.
 */
import { Context, Either, type Effect, type Redacted } from "effect"
import type { Manifest } from "../../schema/node/Manifest.js"
import { tileSecretName } from "../../schema/node/Maps.js"
import {
  CredentialNameInvalid,
  type CredentialStoreUnavailable,
  type PackageNotInstalled,
  type TileKeyConsumer
} from "./CredentialErrors.js"
import type { Secret } from "./SecretBroker.js"
import { SecretNameReserved } from "./SecretErrors.js"

export * from "./CredentialErrors.js"

/** What a service sees: `CREDENTIAL_<NAME>`; the runtime refuses `CLARK_*` and `CC_*` grants (ServiceEnv.ts). */
export const variablePrefix = "CREDENTIAL_"

/** A variable name is at most 64 characters (ServiceEnv.ts), so a name at most 64 minus the prefix. */
export const maxNameLength = 64 - variablePrefix.length

const canonicalPattern = /^[a-z][a-z0-9_]*$/

/** Compatibility-normalised, trimmed, lower-cased: how names are compared. */
const folded = (text: string) => text.normalize("NFKC").trim().toLowerCase()

/**
 * The name a credential is stored and granted under: folded, with `-`, `.` and `:` read as `_`, so `API-Key`,
 * `api_key` and `api.key` are one credential (they would be one variable anyway). Then `[a-z][a-z0-9_]*`, at
 * most 53 characters. The map tile key is refused under any spelling that folds to it.
 */
export const canonicalName = (given: string): Either.Either<string, CredentialNameInvalid | SecretNameReserved> => {
  const name = folded(given).replace(/[-.:]/g, "_")
  if (folded(given) === tileSecretName || name === tileSecretName.replace(":", "_")) {
    return Either.left(new SecretNameReserved({ name: tileSecretName }))
  }
  if (name.length === 0 || name.length > maxNameLength) {
    return Either.left(new CredentialNameInvalid({ name: given, problem: "length" }))
  }
  if (!canonicalPattern.test(name)) return Either.left(new CredentialNameInvalid({ name: given, problem: "characters" }))
  return Either.right(name)
}

/**
 * Every secret name of a package starts with this. The id is URL-encoded, so no id (whatever it holds) can end
 * where another's prefix does, and a canonical name never holds `:`.
 */
export const secretPrefix = (packageId: string) => `package:${encodeURIComponent(packageId)}:`

/** The broker's name of a package's credential (`name` canonical). */
export const secretNameOf = (packageId: string, name: string) => `${secretPrefix(packageId)}${name}`

/** The environment variable a canonical name is granted as. */
export const variableOf = (name: string) => `${variablePrefix}${name.toUpperCase()}`

/**
 * Whether the manifest declares the package a consumer of the map tile key: a permission (any kind; by
 * convention `{kind: capability, value: maps:tiles}`) whose value folds to `maps:tiles`.
 */
export const consumesTileKey = (manifest: Manifest) =>
  manifest.permissions.some((permission) => folded(permission.value) === tileSecretName)

/**
 * The grants of one package from secrets listed by the broker: only names under that package's prefix, only
 * canonical names (anything else was not written by this module and is ignored), each as its variable.
 */
export const grantsOf = (
  packageId: string,
  secrets: ReadonlyArray<{ readonly name: string; readonly secret: Secret }>
): Record<string, Redacted.Redacted<string>> => {
  const prefix = secretPrefix(packageId)
  const grants: Record<string, Redacted.Redacted<string>> = {}
  for (const { name, secret } of secrets) {
    if (!name.startsWith(prefix)) continue
    const rest = name.slice(prefix.length)
    if (rest.length > maxNameLength || !canonicalPattern.test(rest)) continue
    grants[variableOf(rest)] = secret.value
  }
  return grants
}

/** A stored credential as the route answers it (never the value). */
export interface StoredCredential {
  readonly packageId: string
  /** The canonical name it is stored and granted under. */
  readonly name: string
}

export class PackageCredentials extends Context.Tag("clark/node/PackageCredentials")<PackageCredentials, {
  /**
   * Stores (or replaces) a credential of an installed package that is not a consumer of the map tile key,
   * durably, before answering. Checks in order: the name (the map key first), the package, its manifest.
   */
  readonly store: (
    packageId: string,
    name: string,
    value: Redacted.Redacted<string>
  ) => Effect.Effect<
    StoredCredential,
    SecretNameReserved | CredentialNameInvalid | PackageNotInstalled | TileKeyConsumer | CredentialStoreUnavailable
  >
  /** Whether credentials may be stored for the package now (installed, not a map key consumer). */
  readonly admits: (packageId: string) => Effect.Effect<void, PackageNotInstalled | TileKeyConsumer>
  /** The package's own credentials as environment variables (`CREDENTIAL_<NAME>`), never another package's. */
  readonly grants: (packageId: string) => Effect.Effect<Record<string, Redacted.Redacted<string>>, CredentialStoreUnavailable>
}>() {}
