/**
 * Conversation artifacts. The bytes live in files under `<dataDir>/artifacts/`
 * named by id; this table is the index, the quota count and the state.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Deleting a conversation deletes its rows; the files they named are then
  // orphans, removed by the store's sweep at the next start.
  yield* sql`CREATE TABLE artifacts (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    instance_id TEXT,
    kind TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    name TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    sha256 TEXT,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX artifacts_by_conversation ON artifacts (conversation_id)`
})
