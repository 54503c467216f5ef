/**
 * Preferences and their one step of undo. Values are JSON text; instants are
 * ISO-8601 text taken from `Clock`.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE preferences (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`

  // The last write of each preference: the value it replaced, when it was
  // written, and when it was undone (an undo is itself not undoable).
  yield* sql`CREATE TABLE preference_undo (
    key TEXT PRIMARY KEY,
    previous_value TEXT NOT NULL,
    written_at TEXT NOT NULL,
    undone_at TEXT
  )`
})
