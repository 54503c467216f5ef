/**
 * What the secret broker and the credential route refuse. Never a secret's
 * value: an error message may reach a log, a page or a model.
 */
import { Schema } from "effect"
import { tileSecretName } from "../../schema/node/Maps.js"

/** The broker cannot read or write its store (unreadable file, wrong permissions, disk full). */
export class SecretStoreUnavailable extends Schema.TaggedError<SecretStoreUnavailable>()("SecretStoreUnavailable", {
  /** For the log; names files and errors, never a value. */
  reason: Schema.String
}) {}

/**
 * The generic credential route refuses the map tile key by name, so it is
 * never stored without its origin binding: it goes through /map-tiles/key.
 */
export class SecretNameReserved extends Schema.TaggedError<SecretNameReserved>()("SecretNameReserved", {
  name: Schema.Literal(tileSecretName)
}) {}

export type SecretError = SecretStoreUnavailable | SecretNameReserved
