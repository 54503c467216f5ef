/**
 * What the credential route and the connection flow refuse. Never a credential's value, a connection's code or
 * its state: an error message may reach a log, a page or a model.
 */
import { Schema } from "effect"

/** Why a credential name is refused (the name itself is not secret and may be quoted, shortened). */
export const CredentialNameProblem = Schema.Literal("characters", "length")

/** The name is not one a credential can have (docs/decisions.md, "Package credentials"). */
export class CredentialNameInvalid extends Schema.TaggedError<CredentialNameInvalid>()("CredentialNameInvalid", {
  name: Schema.String,
  problem: CredentialNameProblem
}) {}

/** No package of this id is installed on the node. */
export class PackageNotInstalled extends Schema.TaggedError<PackageNotInstalled>()("PackageNotInstalled", {
  packageId: Schema.String
}) {}

/**
 * The package declares itself a consumer of the map tile key (`maps:tiles`): the generic credential route and
 * the connection flow store nothing for it, so the key can never be planted beside it under another name.
 */
export class TileKeyConsumer extends Schema.TaggedError<TileKeyConsumer>()("TileKeyConsumer", {
  packageId: Schema.String
}) {}

/** The secret broker cannot keep a package credential now (its reason goes to the log only, never a value). */
export class CredentialStoreUnavailable extends Schema.TaggedError<CredentialStoreUnavailable>()(
  "CredentialStoreUnavailable",
  { reason: Schema.String }
) {}

/** The request's `Host` is not an address a callback URL can be built on. */
export class CallbackHostInvalid extends Schema.TaggedError<CallbackHostInvalid>()("CallbackHostInvalid", {}) {}

export type CredentialError = CredentialNameInvalid | PackageNotInstalled | TileKeyConsumer | CredentialStoreUnavailable
export type ConnectionStartError = CredentialError | CallbackHostInvalid
