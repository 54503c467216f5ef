/**
 * Accounts and the credentials that stand for them: personal API tokens
 * (`cmk_…`), OAuth access tokens (`cmo_…`) and session tokens (`cms_…`). Plain token values leave this
 * service only as `Redacted` values, once, when issued; they are never stored,
 * logged or put in an error message.
 */
import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import { type AccountProfile, type Role, Scope } from "../../schema/marketplace/Account.js"
import type { Credential } from "../../schema/marketplace/Security.js"

/** Every scope, in the order the spec lists them; an admin holds all of them. */
export const allScopes: ReadonlyArray<Scope> = Scope.literals

/** What a signed-in user of each role may do; a session carries its user's scopes. */
export const roleScopes: Record<Role, ReadonlyArray<Scope>> = {
  admin: allScopes,
  user: [
    "packages:read",
    "packages:submit",
    "publishers:read",
    "publishers:write",
    "pages:read",
    "account:read",
    "account:write",
    "devices:link",
    "media:write"
  ]
}

/** The account without the credential-dependent `scopes`. */
export type Profile = Omit<AccountProfile, "scopes">

export interface NewUser {
  readonly email: string
  readonly name: string
  readonly role?: Role | undefined
  readonly emailVerified?: boolean | undefined
  readonly image?: string | null | undefined
}

export class UserExists extends Data.TaggedError("UserExists")<{ readonly email: string }> {}
/** The credential is valid but its account is suspended by an admin. */
export class AccountSuspended extends Data.TaggedError("AccountSuspended")<{}> {}
export class UnknownUser extends Data.TaggedError("UnknownUser")<{ readonly email: string }> {}
/** A token asked for scopes its user's role does not hold. */
export class ScopeNotAllowed extends Data.TaggedError("ScopeNotAllowed")<{
  readonly scopes: ReadonlyArray<Scope>
}> {}

export class Credentials extends Context.Tag("clark/marketplace/Credentials")<Credentials, {
  /**
   * The credential a token stands for, or none when it is malformed, fails its
   * checksum, is unknown, expired (by `Clock`) or revoked. A cookie carries only
   * session tokens. A live credential of a suspended account fails.
   */
  readonly authenticate: (
    token: Redacted.Redacted<string>,
    via: "bearer" | "cookie"
  ) => Effect.Effect<Option.Option<Credential>, AccountSuspended>
  /** Emails are compared case-insensitively (stored lower-cased). */
  readonly createUser: (user: NewUser) => Effect.Effect<Profile, UserExists>
  /** A new personal API token; the plain value is returned once and only its hash is kept. */
  readonly issueApiToken: (input: {
    readonly email: string
    readonly scopes: ReadonlyArray<Scope>
    readonly expiresAt?: Date | undefined
  }) => Effect.Effect<Redacted.Redacted<string>, UnknownUser | ScopeNotAllowed>
  /**
   * An OAuth access token for `audience` under a new grant to `clientId`;
   * returned once, kept only as a hash.
   */
  readonly issueOAuthToken: (input: {
    readonly email: string
    readonly scopes: ReadonlyArray<Scope>
    readonly audience: string
    readonly clientId: string
    readonly expiresAt: Date
  }) => Effect.Effect<Redacted.Redacted<string>, UnknownUser | ScopeNotAllowed>
  /** Revokes the API token; false when no such live token exists. */
  readonly revokeApiToken: (token: Redacted.Redacted<string>) => Effect.Effect<boolean>
  /** A new session token for the user, valid for `ttlMillis` (default 30 days) from now. */
  readonly issueSession: (
    email: string,
    options?: { readonly ttlMillis?: number | undefined }
  ) => Effect.Effect<Redacted.Redacted<string>, UnknownUser>
  readonly profile: (userId: string) => Effect.Effect<Option.Option<Profile>>
}>() {}
