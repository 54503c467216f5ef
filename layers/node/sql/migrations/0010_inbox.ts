/**
 * The inbox: what the person did to each notice (read, dismissed, snoozed), the sources they silenced, the
 * versions they skipped, and which work was retried as which.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE notices ADD COLUMN read_at TEXT`
  yield* sql`ALTER TABLE notices ADD COLUMN dismissed_at TEXT`
  yield* sql`ALTER TABLE notices ADD COLUMN snoozed_until TEXT`
  // What sends notices like this one (a package's updates, the engine's, a job's capability); suppressing it
  // silences them all until unsuppressed.
  yield* sql`ALTER TABLE notices ADD COLUMN source TEXT`
  // The update a notice is installing right now (ACTION_IN_PROGRESS), claimed by one conditional write.
  yield* sql`ALTER TABLE notices ADD COLUMN busy_since TEXT`
  yield* sql`CREATE INDEX notices_newest ON notices (created_at DESC, id DESC)`
  yield* sql`CREATE INDEX notices_subject ON notices (kind, subject_id)`

  yield* sql`CREATE TABLE notice_suppressions (
    source TEXT PRIMARY KEY,
    suppressed_at TEXT NOT NULL
  )`

  // A skipped version hides its notice and every older one of that package (or of the engine, kind `pi`).
  yield* sql`CREATE TABLE skipped_versions (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    skipped_at TEXT NOT NULL,
    PRIMARY KEY (kind, name, version)
  )`

  // One retry per work: the primary key is what makes a second press ALREADY_RETRIED.
  yield* sql`CREATE TABLE work_retries (
    work_id TEXT PRIMARY KEY,
    retried_as TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    retried_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX work_retries_as ON work_retries (retried_as)`
})
