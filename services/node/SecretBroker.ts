/**
 * Secrets the node holds for the person: the map tile key (`maps:tiles`,
 * bound to one provider origin) and package credentials. Values leave the
 * broker only as `Redacted` and only to the code that sends them to their
 * origin; they are never logged, answered, put in an error message, a cache
 * key, a prop or model input.
 */
import { Context, type Effect, type Option, type Redacted } from "effect"
import type { SecretStoreUnavailable } from "./SecretErrors.js"

export { SecretStoreUnavailable } from "./SecretErrors.js"

export interface Secret {
  readonly value: Redacted.Redacted<string>
  /** The only origin the secret may be sent to, when it is bound to one. */
  readonly origin?: string | undefined
}

export class SecretBroker extends Context.Tag("clark/node/SecretBroker")<SecretBroker, {
  readonly get: (name: string) => Effect.Effect<Option.Option<Secret>, SecretStoreUnavailable>
  /** Every secret whose name starts with `prefix` (a package's credentials), in name order. */
  readonly list: (
    prefix: string
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string; readonly secret: Secret }>, SecretStoreUnavailable>
  /** Stores or replaces the secret, durably, before answering. */
  readonly put: (name: string, secret: Secret) => Effect.Effect<void, SecretStoreUnavailable>
  /** False when there was no such secret. */
  readonly remove: (name: string) => Effect.Effect<boolean, SecretStoreUnavailable>
}>() {}
