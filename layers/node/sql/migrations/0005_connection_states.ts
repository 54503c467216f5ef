/**
 * Connection states the node issued (docs/decisions.md, "Package connections"): only the state's SHA-256,
 * its package and when it stops being usable. A row is deleted when it is spent, and expired ones when
 * another is issued, so a restart between issue and callback keeps a state usable until it expires.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE connection_states (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    state_hash TEXT NOT NULL UNIQUE,
    package_id TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL
  )`
  yield* sql`CREATE INDEX connection_states_package ON connection_states (package_id, seq)`
})
