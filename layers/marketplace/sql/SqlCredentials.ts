/**
 * Credentials on SQLite or PostgreSQL. Tokens are looked up by the SHA-256
 * hash of their plain value, after the checksum has been verified; expiry is
 * judged by `Clock`. SQL failures are defects (no token text reaches them:
 * only hashes are bound).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import type { Role, Scope } from "../../../schema/marketplace/Account.js"
import type { Credential } from "../../../schema/marketplace/Security.js"
import {
  AccountSuspended,
  Credentials,
  type Profile,
  roleScopes,
  ScopeNotAllowed,
  UnknownUser,
  UserExists
} from "../../../services/marketplace/Credentials.js"
import * as TokenFormat from "../../../services/marketplace/TokenFormat.js"
import { bool, flag, json, type Row, text, textOrNull } from "./Rows.js"

const defaultSessionTtlMillis = 30 * 24 * 60 * 60 * 1000

const normalizeEmail = (email: string) => email.trim().toLowerCase()

const toProfile = (row: Row): Profile => ({
  id: text(row.id),
  name: text(row.name),
  email: text(row.email),
  emailVerified: bool(row.emailVerified),
  image: textOrNull(row.image),
  role: text(row.role) as Role,
  createdAt: text(row.createdAt)
})

/** Live at `now`: not revoked, and not past its expiry. */
const live = (row: Row, now: number) =>
  (row.revokedAt === null || row.revokedAt === undefined) &&
  (row.expiresAt === null || row.expiresAt === undefined || Date.parse(text(row.expiresAt)) > now)

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  const userByEmail = (email: string) =>
    sql<Row>`SELECT id, email, name, email_verified, image, role, created_at FROM users
      WHERE email = ${normalizeEmail(email)}`.pipe(
      Effect.map(([row]) => Option.map(Option.fromNullable(row), toProfile)),
      Effect.orDie
    )

  const requireUser = (email: string) =>
    Effect.flatMap(
      userByEmail(email),
      Option.match({ onNone: () => Effect.fail(new UnknownUser({ email })), onSome: Effect.succeed })
    )

  const authenticate: Credentials["Type"]["authenticate"] = (token, via) =>
    Effect.gen(function*() {
      const kind = TokenFormat.parse(Redacted.value(token))
      if (kind === undefined) return Option.none()
      if (via === "cookie" && kind !== "session") return Option.none()
      const tokenHash = TokenFormat.hash(Redacted.value(token))
      const [row] = kind === "api-token"
        ? yield* sql<Row>`SELECT t.user_id, t.scopes, t.expires_at, t.revoked_at, u.role, u.suspended_at
            FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ${tokenHash}`
        : kind === "oauth"
        ? yield* sql<Row>`SELECT g.user_id, g.scopes, t.audience, t.expires_at, t.revoked_at, u.role,
            u.suspended_at FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id
            WHERE t.token_hash = ${tokenHash}`
        : yield* sql<Row>`SELECT s.user_id, s.expires_at, s.revoked_at, u.role, u.suspended_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ${tokenHash}`
      if (row === undefined) return Option.none()
      const now = yield* Clock.currentTimeMillis
      if (!live(row, now)) return Option.none()
      if (row.suspendedAt !== null && row.suspendedAt !== undefined) return yield* new AccountSuspended()
      const role = text(row.role) as Role
      // A token never carries more than its user's role allows today.
      const allowed = roleScopes[role]
      const scopes = kind === "session"
        ? allowed
        : json<Array<Scope>>(row.scopes).filter((scope) => allowed.includes(scope))
      const credential: Credential = {
        userId: text(row.userId),
        role,
        scopes,
        kind,
        viaCookie: via === "cookie",
        ...(kind === "oauth" ? { audience: text(row.audience) } : {})
      }
      return Option.some(credential)
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const createUser: Credentials["Type"]["createUser"] = (user) =>
    Effect.gen(function*() {
      const email = normalizeEmail(user.email)
      if (Option.isSome(yield* userByEmail(email))) return yield* Effect.fail(new UserExists({ email }))
      const profile: Profile = {
        id: `usr_${randomUUID()}`,
        email,
        name: user.name,
        emailVerified: user.emailVerified ?? false,
        image: user.image ?? null,
        role: user.role ?? "user",
        createdAt: yield* nowIso
      }
      yield* sql`INSERT INTO users (id, email, name, email_verified, image, role, created_at) VALUES (
        ${profile.id}, ${profile.email}, ${profile.name}, ${flag(dialect, profile.emailVerified)},
        ${profile.image}, ${profile.role}, ${profile.createdAt})`.pipe(Effect.orDie)
      return profile
    })

  /** The user, when their role allows every scope asked for. */
  const grantee = (email: string, scopes: ReadonlyArray<Scope>) =>
    Effect.gen(function*() {
      const user = yield* requireUser(email)
      const refused = scopes.filter((scope) => !roleScopes[user.role].includes(scope))
      if (refused.length > 0) return yield* Effect.fail(new ScopeNotAllowed({ scopes: refused }))
      return user
    })

  const issueApiToken: Credentials["Type"]["issueApiToken"] = ({ email, expiresAt, scopes }) =>
    Effect.gen(function*() {
      const user = yield* grantee(email, scopes)
      const token = TokenFormat.generate("api-token")
      yield* sql`INSERT INTO api_tokens (id, user_id, token_hash, scopes, created_at, expires_at, revoked_at) VALUES (
        ${`tok_${randomUUID()}`}, ${user.id}, ${TokenFormat.hash(token)}, ${JSON.stringify([...new Set(scopes)])},
        ${yield* nowIso}, ${expiresAt === undefined ? null : expiresAt.toISOString()}, ${null})`.pipe(Effect.orDie)
      return Redacted.make(token)
    })

  const issueOAuthToken: Credentials["Type"]["issueOAuthToken"] = ({ audience, clientId, email, expiresAt, scopes }) =>
    Effect.gen(function*() {
      const user = yield* grantee(email, scopes)
      const token = TokenFormat.generate("oauth")
      const now = yield* nowIso
      const grantId = `grt_${randomUUID()}`
      yield* sql.withTransaction(Effect.all([
        sql`INSERT INTO oauth_grants (id, user_id, client_id, scopes, created_at) VALUES (
          ${grantId}, ${user.id}, ${clientId}, ${JSON.stringify([...new Set(scopes)])}, ${now})`,
        sql`INSERT INTO oauth_access_tokens (id, grant_id, token_hash, audience, created_at, expires_at, revoked_at)
          VALUES (${`oat_${randomUUID()}`}, ${grantId}, ${TokenFormat.hash(token)}, ${audience}, ${now},
            ${expiresAt.toISOString()}, ${null})`
      ])).pipe(Effect.orDie)
      return Redacted.make(token)
    })

  const revokeApiToken: Credentials["Type"]["revokeApiToken"] = (token) =>
    Effect.gen(function*() {
      if (TokenFormat.parse(Redacted.value(token)) !== "api-token") return false
      const rows = yield* sql<Row>`UPDATE api_tokens SET revoked_at = ${yield* nowIso}
        WHERE token_hash = ${TokenFormat.hash(Redacted.value(token))} AND revoked_at IS NULL RETURNING id`
      return rows.length > 0
    }).pipe(Effect.orDie)

  const issueSession: Credentials["Type"]["issueSession"] = (email, options) =>
    Effect.gen(function*() {
      const user = yield* requireUser(email)
      const now = yield* Clock.currentTimeMillis
      const token = TokenFormat.generate("session")
      const expiresAt = new Date(now + (options?.ttlMillis ?? defaultSessionTtlMillis)).toISOString()
      yield* sql`INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at, revoked_at) VALUES (
        ${`ses_${randomUUID()}`}, ${user.id}, ${TokenFormat.hash(token)}, ${new Date(now).toISOString()},
        ${expiresAt}, ${null})`.pipe(Effect.orDie)
      return Redacted.make(token)
    })

  const profile: Credentials["Type"]["profile"] = (userId) =>
    sql<Row>`SELECT id, email, name, email_verified, image, role, created_at FROM users WHERE id = ${userId}`.pipe(
      Effect.map(([row]) => Option.map(Option.fromNullable(row), toProfile)),
      Effect.orDie
    )

  return Credentials.of({
    authenticate,
    createUser,
    issueApiToken,
    issueOAuthToken,
    revokeApiToken,
    issueSession,
    profile
  })
})

export const layer = Layer.effect(Credentials, make)
