/**
 * PackageCredentials over the secret broker and the install records: a credential is stored only for an
 * installed package that is not a map tile key consumer, under the package's own prefix, and granted only
 * from that prefix. The broker's reasons go to the log by themselves, never beside a value.
 */
import { Effect, Either, Layer, Option, type Redacted } from "effect"
import type { ServicePackage } from "../../../services/node/ServiceRuntime.js"
import {
  canonicalName,
  consumesTileKey,
  CredentialStoreUnavailable,
  grantsOf,
  PackageCredentials,
  PackageNotInstalled,
  secretNameOf,
  secretPrefix,
  TileKeyConsumer
} from "../../../services/node/PackageCredentials.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { SecretBroker, type SecretStoreUnavailable } from "../../../services/node/SecretBroker.js"

const unavailable = (error: SecretStoreUnavailable) =>
  Effect.zipRight(
    Effect.logWarning("The secret broker cannot keep package credentials", { reason: error.reason }),
    Effect.fail(new CredentialStoreUnavailable({ reason: error.reason }))
  )

export const make = Effect.gen(function*() {
  const secrets = yield* SecretBroker
  const records = yield* PackageRecords

  const admits = (packageId: string) =>
    Effect.flatMap(
      records.installedOne(packageId),
      (installed): Effect.Effect<void, PackageNotInstalled | TileKeyConsumer> =>
        Option.isNone(installed)
          ? Effect.fail(new PackageNotInstalled({ packageId }))
          : consumesTileKey(installed.value.manifest)
          ? Effect.fail(new TileKeyConsumer({ packageId }))
          : Effect.void
    )

  const store = (packageId: string, given: string, value: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const name = yield* Either.match(canonicalName(given), { onLeft: Effect.fail, onRight: Effect.succeed })
      yield* admits(packageId)
      yield* secrets.put(secretNameOf(packageId, name), { value }).pipe(Effect.catchAll(unavailable))
      return { packageId, name }
    }).pipe(Effect.withSpan("PackageCredentials.store"))

  const grants = (packageId: string) =>
    secrets.list(secretPrefix(packageId)).pipe(
      Effect.map((listed) => grantsOf(packageId, listed)),
      Effect.catchAll(unavailable),
      Effect.withSpan("PackageCredentials.grants")
    )

  return PackageCredentials.of({ store, admits, grants })
})

export const layer: Layer.Layer<PackageCredentials, never, SecretBroker | PackageRecords> = Layer.effect(
  PackageCredentials,
  make
)

/**
 * The service runtime's `grants` option (layers/node/services/McpServiceRuntime.ts): a package's own
 * credentials, read afresh at each start of its process. When the broker cannot be read the start fails
 * (the runtime answers SERVICE_UNREACHABLE) rather than running the service without its credentials.
 *
 *   const grants = yield* runtimeGrants
 *   McpServiceRuntime.layer({ dataDir, grants })
 */
export const runtimeGrants = Effect.map(
  PackageCredentials,
  (credentials) => (pkg: ServicePackage) =>
    credentials.grants(pkg.packageId).pipe(
      Effect.catchAll(() => Effect.dieMessage("the package's credentials cannot be read"))
    )
)
