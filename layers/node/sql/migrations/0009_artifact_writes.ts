/**
 * Widget file writes (spec, "Artifact"): who made or was handed a file, when it was last written (the grant and
 * the removal of unfinished files run from it), and the composer attachment a file became.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The widget a file belongs to is conversation_id + instance_id + package_id; null for media and job files.
  yield* sql`ALTER TABLE artifacts ADD COLUMN package_id TEXT`
  // The pick or the last write: a grant lasts 24 hours from it, and an unfinished file is removed 24 hours after it.
  yield* sql`ALTER TABLE artifacts ADD COLUMN written_at TEXT`
  yield* sql`UPDATE artifacts SET written_at = updated_at`
  yield* sql`CREATE INDEX artifacts_by_instance ON artifacts (conversation_id, instance_id, kind)`
  yield* sql`CREATE INDEX artifacts_unfinished ON artifacts (state, written_at)`

  // One attachment per file: the first attach decides its name; attaching again answers the same row.
  yield* sql`CREATE TABLE artifact_attachments (
    id TEXT PRIMARY KEY,
    artifact_id TEXT NOT NULL UNIQUE REFERENCES artifacts (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
})
