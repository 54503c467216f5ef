/** CredentialManagement on SQLite or PostgreSQL. Only token hashes are stored or bound. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import type { Scope } from "../../../schema/marketplace/Account.js"
import type { ApiTokenInfo } from "../../../schema/marketplace/AccountCredentials.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import { AccountNotFound, CredentialManagement } from "../../../services/marketplace/CredentialManagement.js"
import * as TokenFormat from "../../../services/marketplace/TokenFormat.js"
import { json, type Row, text, textOrNull } from "./Rows.js"

const dayMillis = 24 * 60 * 60 * 1000

const toToken = (row: Row): ApiTokenInfo => ({
  id: text(row.id),
  name: text(row.name),
  scopes: json<Array<Scope>>(row.scopes),
  createdAt: text(row.createdAt),
  expiresAt: textOrNull(row.expiresAt),
  revokedAt: textOrNull(row.revokedAt)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const audit = yield* AuditLog
  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  const token = (userId: string, id: string) =>
    sql<Row>`SELECT id, name, scopes, created_at, expires_at, revoked_at FROM api_tokens
      WHERE user_id = ${userId} AND id = ${id}`.pipe(Effect.map(([row]) => Option.map(Option.fromNullable(row), toToken)))

  const tokens: CredentialManagement["Type"]["tokens"] = (userId) =>
    sql<Row>`SELECT id, name, scopes, created_at, expires_at, revoked_at FROM api_tokens
      WHERE user_id = ${userId} ORDER BY created_at DESC, id`.pipe(Effect.map((rows) => rows.map(toToken)), Effect.orDie)

  const createToken: CredentialManagement["Type"]["createToken"] = ({ expiresInDays, name, scopes, userId }) =>
    Effect.gen(function*() {
      const secret = TokenFormat.generate("api-token")
      const now = yield* Clock.currentTimeMillis
      const info: ApiTokenInfo = {
        id: `tok_${randomUUID()}`,
        name,
        scopes: [...new Set(scopes)],
        createdAt: new Date(now).toISOString(),
        expiresAt: expiresInDays === null ? null : new Date(now + expiresInDays * dayMillis).toISOString(),
        revokedAt: null
      }
      yield* sql`INSERT INTO api_tokens (id, user_id, token_hash, scopes, created_at, expires_at, revoked_at, name)
        VALUES (${info.id}, ${userId}, ${TokenFormat.hash(secret)}, ${JSON.stringify(info.scopes)}, ${info.createdAt},
          ${info.expiresAt}, ${null}, ${name})`
      return { token: info, secret: Redacted.make(secret) }
    }).pipe(Effect.orDie)

  const revokeToken: CredentialManagement["Type"]["revokeToken"] = (userId, id) =>
    Effect.gen(function*() {
      yield* sql`UPDATE api_tokens SET revoked_at = ${yield* nowIso}
        WHERE user_id = ${userId} AND id = ${id} AND revoked_at IS NULL`
      return yield* token(userId, id)
    }).pipe(Effect.orDie)

  const devices: CredentialManagement["Type"]["devices"] = (userId) =>
    sql<Row>`SELECT id, label, created_at FROM device_links WHERE user_id = ${userId} ORDER BY created_at DESC, id`.pipe(
      Effect.map((rows) => rows.map((row) => ({ id: text(row.id), label: text(row.label), createdAt: text(row.createdAt) }))),
      Effect.orDie
    )

  const revokeDevice: CredentialManagement["Type"]["revokeDevice"] = (userId, id) =>
    sql<Row>`DELETE FROM device_links WHERE user_id = ${userId} AND id = ${id} RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const grants: CredentialManagement["Type"]["grants"] = (userId) =>
    sql<Row>`SELECT id, client_id, scopes, created_at FROM oauth_grants WHERE user_id = ${userId}
      ORDER BY created_at DESC, id`.pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          id: text(row.id),
          clientId: text(row.clientId),
          scopes: json<Array<Scope>>(row.scopes),
          createdAt: text(row.createdAt)
        }))
      ),
      Effect.orDie
    )

  // Its access tokens go with it (ON DELETE CASCADE).
  const revokeGrant: CredentialManagement["Type"]["revokeGrant"] = (userId, id) =>
    sql<Row>`DELETE FROM oauth_grants WHERE user_id = ${userId} AND id = ${id} RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const setSuspended: CredentialManagement["Type"]["setSuspended"] = ({ actorId, id, reason, suspended }) =>
    sql.withTransaction(Effect.gen(function*() {
      const [user] = yield* sql<Row>`SELECT suspended_at FROM users WHERE id = ${id}`
      if (user === undefined) return yield* new AccountNotFound({ id })
      const before = textOrNull(user.suspendedAt)
      // Suspending a suspended account keeps its first instant; nothing changes, nothing is logged.
      const after = suspended ? before ?? (yield* nowIso) : null
      if (after !== before) {
        yield* sql`UPDATE users SET suspended_at = ${after} WHERE id = ${id}`
        yield* audit.append({
          actorId,
          action: suspended ? "account.suspend" : "account.unsuspend",
          targetKind: "account",
          target: id,
          before: { suspendedAt: before },
          after: { suspendedAt: after, ...(reason === undefined ? {} : { reason }) }
        })
      }
      return { id, suspendedAt: after }
    })).pipe(Effect.catchTag("SqlError", Effect.die))

  return CredentialManagement.of({
    tokens,
    createToken,
    revokeToken,
    devices,
    revokeDevice,
    grants,
    revokeGrant,
    setSuspended
  })
})

export const layer = Layer.effect(CredentialManagement, make)
