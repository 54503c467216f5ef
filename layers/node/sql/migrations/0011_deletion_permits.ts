/**
 * Conversation deletion's confirmation tokens and permits (spec, "Conversation deletion"), each stored as the
 * SHA-256 of the token: bound to the person and the conversation, with an expiry, spent once.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // `kind` is `confirmation` (step 1, answered once) or `permit` (step 2, deletes once). No foreign key on the
  // conversation: a spent permit outlives the conversation it deleted.
  yield* sql`CREATE TABLE deletion_tokens (
    digest TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    used_at_ms INTEGER,
    created_at TEXT NOT NULL
  )`
})
