/**
 * The account's own credentials: personal API tokens (the plain value shown
 * once, when created), linked devices and OAuth grants; and suspending an
 * account (admin).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { Scope } from "./Account.js"
import { AuditPage, AuditParams } from "./Audit.js"
import { BadRequestWire, ConflictWire, NotFoundWire, RateLimitedWire, ValidationFailedWire } from "./Errors.js"
import { Authentication } from "./Security.js"

export const ApiTokenInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: DateTimeString,
  expiresAt: Schema.NullOr(DateTimeString),
  revokedAt: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "ApiTokenInfo" })
export type ApiTokenInfo = typeof ApiTokenInfo.Type

export const ApiTokenList = Schema.Struct({ items: Schema.Array(ApiTokenInfo) })

export const CreateApiTokenRequest = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  scopes: Schema.Array(Scope).pipe(Schema.minItems(1), Schema.maxItems(Scope.literals.length)),
  /** Without it the token does not expire. */
  expiresInDays: Schema.optional(Schema.Int.pipe(Schema.between(1, 366)))
})

/** The only answer that ever carries the token's plain value. */
export const CreatedApiToken = Schema.Struct({ token: ApiTokenInfo, secret: Schema.String }).annotations({
  identifier: "CreatedApiToken"
})
export type CreatedApiToken = typeof CreatedApiToken.Type

export const DeviceLink = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  createdAt: DateTimeString
}).annotations({ identifier: "DeviceLink" })
export type DeviceLink = typeof DeviceLink.Type

export const DeviceLinkList = Schema.Struct({ items: Schema.Array(DeviceLink) })

export const OAuthGrant = Schema.Struct({
  id: Schema.String,
  clientId: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: DateTimeString
}).annotations({ identifier: "OAuthGrant" })
export type OAuthGrant = typeof OAuthGrant.Type

export const OAuthGrantList = Schema.Struct({ items: Schema.Array(OAuthGrant) })

/** Ids in paths, as the marketplace makes them (`tok_…`, `dev_…`, `grt_…`, `usr_…`). */
const IdPath = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(128),
  Schema.pattern(/^[A-Za-z0-9_-]+$/, { message: () => "must be letters, digits, '_' and '-'" })
)

export const CredentialPath = Schema.Struct({ id: IdPath })

export const Revoked = Schema.Struct({ id: Schema.String, revoked: Schema.Literal(true) }).annotations({
  identifier: "Revoked"
})

export const SuspendRequest = Schema.Struct({
  suspended: Schema.Boolean,
  reason: Schema.optional(Schema.String.pipe(Schema.maxLength(500)))
})

export const AccountSuspension = Schema.Struct({
  id: Schema.String,
  suspendedAt: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "AccountSuspension" })
export type AccountSuspension = typeof AccountSuspension.Type

// ---------------------------------------------------------------------------
// The groups (added to MarketplaceApi in Api.ts)

/** Reads need account:read, creating and revoking account:write (checked by the handlers). */
export class CredentialsGroup extends HttpApiGroup.make("credentials")
  .add(HttpApiEndpoint.get("tokens", "/me/tokens").addSuccess(ApiTokenList))
  .add(
    HttpApiEndpoint.post("createToken", "/me/tokens")
      .setPayload(CreateApiTokenRequest)
      .addSuccess(CreatedApiToken, { status: 201 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .annotate(OpenApi.Description, "Create a personal API token; its plain value is in this answer only")
  )
  .add(
    HttpApiEndpoint.del("revokeToken", "/me/tokens/:id")
      .setPath(CredentialPath)
      .addSuccess(ApiTokenInfo)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(HttpApiEndpoint.get("devices", "/me/devices").addSuccess(DeviceLinkList))
  .add(
    HttpApiEndpoint.del("revokeDevice", "/me/devices/:id")
      .setPath(CredentialPath)
      .addSuccess(Revoked)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(HttpApiEndpoint.get("grants", "/me/grants").addSuccess(OAuthGrantList))
  .add(
    HttpApiEndpoint.del("revokeGrant", "/me/grants/:id")
      .setPath(CredentialPath)
      .addSuccess(Revoked)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}

/** Admin-only (scope admin): suspending accounts and reading the audit log. */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("suspend", "/admin/accounts/:id/suspension")
      .setPath(CredentialPath)
      .setPayload(SuspendRequest)
      .addSuccess(AccountSuspension)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Suspend an account (its credentials answer 403) or lift the suspension")
  )
  .add(
    HttpApiEndpoint.get("audit", "/admin/audit")
      .setUrlParams(AuditParams)
      .addSuccess(AuditPage)
      .addError(ValidationFailedWire)
      .annotate(OpenApi.Description, "The audit log, newest first")
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}
