/** The effect ledger's own database (`<dataDir>/ledger.sqlite`): one row per effect, settled once. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE effects (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    conversation_id TEXT,
    package_id TEXT NOT NULL,
    package_digest TEXT NOT NULL,
    tool TEXT NOT NULL,
    risk TEXT NOT NULL,
    origin TEXT NOT NULL,
    input TEXT NOT NULL,
    summary TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('sent', 'answered', 'unknown', 'confirmed', 'did-not-happen')),
    may_have_run INTEGER NOT NULL,
    reason TEXT,
    answer TEXT,
    checked INTEGER NOT NULL DEFAULT 0,
    recorded_at TEXT NOT NULL,
    answered_at TEXT,
    reconciled_outcome TEXT,
    reconciled_source TEXT,
    reconciled_by TEXT,
    reconciled_at TEXT,
    task_status TEXT
  )`
  yield* sql`CREATE INDEX effects_waiting ON effects (status, recorded_at)`
  // The person's answer "cannot be changed": a reconciled row takes no further update, whatever the caller.
  yield* sql`CREATE TRIGGER effects_reconciled_final BEFORE UPDATE ON effects WHEN OLD.reconciled_at IS NOT NULL
    BEGIN SELECT RAISE(ABORT, 'a reconciled effect cannot be changed'); END`
})
