/**
 * The account's credentials (account:read to list, account:write to create
 * and revoke) and the admin routes (scope admin): suspending an account and
 * reading the audit log. A created token's plain value is in the 201 answer
 * and nowhere else; token creation takes no idempotency key, since a replay
 * would have to keep the answer, and with it the token.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Redacted, Schema } from "effect"
import { CreatedApiToken } from "../../../schema/marketplace/AccountCredentials.js"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { Conflict, Forbidden, NotFound } from "../../../schema/marketplace/Errors.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import { CredentialManagement } from "../../../services/marketplace/CredentialManagement.js"
import { requireScope } from "./Scopes.js"

/** Default and largest page of the audit log. */
const defaultAuditLimit = 50

const revoked = (what: string, id: string) => (done: boolean) =>
  done ? Effect.succeed({ id, revoked: true as const }) : Effect.fail(new NotFound({ message: `No ${what} ${id}` }))

export const CredentialsLive = HttpApiBuilder.group(MarketplaceApi, "credentials", (handlers) =>
  Effect.gen(function*() {
    const manage = yield* CredentialManagement
    const reader = requireScope("account:read")
    const writer = requireScope("account:write")
    return handlers
      .handle("tokens", () => Effect.flatMap(reader, ({ userId }) => Effect.map(manage.tokens(userId), (items) => ({ items }))))
      .handle("createToken", ({ payload }) =>
        Effect.gen(function*() {
          const credential = yield* writer
          // A credential never mints one stronger than itself.
          const notHeld = payload.scopes.filter((scope) => !credential.scopes.includes(scope))
          if (notHeld.length > 0) {
            return yield* new Forbidden({
              message: `The credential does not hold the scopes it asks for: ${notHeld.join(", ")}`,
              details: { scopes: notHeld }
            })
          }
          const created = yield* manage.createToken({
            userId: credential.userId,
            name: payload.name,
            scopes: payload.scopes,
            expiresInDays: payload.expiresInDays ?? null
          })
          const body = yield* Effect.orDie(
            Schema.encode(CreatedApiToken)({ token: created.token, secret: Redacted.value(created.secret) })
          )
          return HttpServerResponse.unsafeJson(body, { status: 201, headers: { "cache-control": "no-store" } })
        }))
      .handle("revokeToken", ({ path }) =>
        Effect.gen(function*() {
          const { userId } = yield* writer
          return yield* Effect.flatMap(
            manage.revokeToken(userId, path.id),
            Option.match({
              onNone: () => Effect.fail(new NotFound({ message: `No API token ${path.id}` })),
              onSome: Effect.succeed
            })
          )
        }))
      .handle("devices", () => Effect.flatMap(reader, ({ userId }) => Effect.map(manage.devices(userId), (items) => ({ items }))))
      .handle("revokeDevice", ({ path }) =>
        Effect.flatMap(writer, ({ userId }) =>
          Effect.flatMap(manage.revokeDevice(userId, path.id), revoked("linked device", path.id))))
      .handle("grants", () => Effect.flatMap(reader, ({ userId }) => Effect.map(manage.grants(userId), (items) => ({ items }))))
      .handle("revokeGrant", ({ path }) =>
        Effect.flatMap(writer, ({ userId }) =>
          Effect.flatMap(manage.revokeGrant(userId, path.id), revoked("OAuth grant", path.id))))
  }))

export const AdminLive = HttpApiBuilder.group(MarketplaceApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const manage = yield* CredentialManagement
    const audit = yield* AuditLog
    const admin = requireScope("admin")
    return handlers
      .handle("suspend", ({ path, payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* admin
          if (path.id === userId && payload.suspended) {
            return yield* new Conflict({ message: "An admin cannot suspend their own account" })
          }
          return yield* manage.setSuspended({ ...payload, id: path.id, actorId: userId }).pipe(
            Effect.mapError(({ id }) => new NotFound({ message: `No account ${id}` }))
          )
        }))
      .handle("audit", ({ urlParams }) =>
        Effect.zipRight(admin, audit.list({ ...urlParams, limit: urlParams.limit ?? defaultAuditLimit })))
  }))
