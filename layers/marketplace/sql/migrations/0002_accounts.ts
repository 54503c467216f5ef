/**
 * Accounts and credentials. Tokens are stored only as SHA-256 hex hashes of
 * their plain value; instants are canonical ISO-8601 UTC text as in 0001.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const bool = sql.onDialectOrElse({ pg: () => sql.literal("BOOLEAN"), orElse: () => sql.literal("INTEGER") })

  yield* sql`CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email_verified ${bool} NOT NULL,
    image TEXT,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`

  yield* sql`CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX api_tokens_by_user ON api_tokens (user_id)`

  yield* sql`CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX sessions_by_user ON sessions (user_id)`
})
