/**
 * An account's own credentials, managed through the API: personal API tokens
 * (the plain value leaves once, as a `Redacted`, when created; only its hash is
 * kept), linked devices and OAuth grants; and suspending an account (admin).
 *
 * Revoking an API token marks it revoked (the owner still sees it, with
 * `revokedAt`); revoking a device link or an OAuth grant removes it, the
 * grant's access tokens with it. DELETE /me counts the rows it removes, so a
 * revoked token still counts there and a revoked device or grant does not.
 */
import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import type { ApiTokenInfo, AccountSuspension, DeviceLink, OAuthGrant } from "../../schema/marketplace/AccountCredentials.js"
import type { Scope } from "../../schema/marketplace/Account.js"

/** A credential asked for scopes the credential asking does not hold. */
export class ScopesNotHeld extends Data.TaggedError("ScopesNotHeld")<{ readonly scopes: ReadonlyArray<Scope> }> {}
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly id: string }> {}

export class CredentialManagement extends Context.Tag("clark/marketplace/CredentialManagement")<CredentialManagement, {
  /** Newest first, revoked and expired ones included. */
  readonly tokens: (userId: string) => Effect.Effect<ReadonlyArray<ApiTokenInfo>>
  readonly createToken: (input: {
    readonly userId: string
    readonly name: string
    readonly scopes: ReadonlyArray<Scope>
    /** From the creation instant; null for a token that does not expire. */
    readonly expiresInDays: number | null
  }) => Effect.Effect<{ readonly token: ApiTokenInfo; readonly secret: Redacted.Redacted<string> }>
  /** None when the user has no token with that id; revoking a revoked token changes nothing. */
  readonly revokeToken: (userId: string, id: string) => Effect.Effect<Option.Option<ApiTokenInfo>>
  readonly devices: (userId: string) => Effect.Effect<ReadonlyArray<DeviceLink>>
  /** False when the user has no device link with that id. */
  readonly revokeDevice: (userId: string, id: string) => Effect.Effect<boolean>
  readonly grants: (userId: string) => Effect.Effect<ReadonlyArray<OAuthGrant>>
  readonly revokeGrant: (userId: string, id: string) => Effect.Effect<boolean>
  /**
   * Suspends the account (every credential of it is refused) or lifts the
   * suspension, recorded in the audit log with the admin who did it.
   */
  readonly setSuspended: (input: {
    readonly id: string
    readonly suspended: boolean
    readonly reason?: string | undefined
    readonly actorId: string
  }) => Effect.Effect<AccountSuspension, AccountNotFound>
}>() {}
