/**
 * The bytes all artifacts hold, in one row kept by triggers (issue 15, point 10). The 1 GiB share was a SUM over
 * every artifact row, run for each chunk a widget writes: its cost grows with the table (about 40 µs at 1,000 rows,
 * 650 µs at 10,000, measured on better-sqlite3). The triggers change the row inside the very statement that
 * inserts, deletes or resizes an artifact (a conversation's deletion cascades to its artifacts and fires them too),
 * so the total is exact whatever path changes the table, and commits or rolls back with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE artifact_totals (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    used_bytes INTEGER NOT NULL
  )`
  yield* sql`INSERT INTO artifact_totals (id, used_bytes) SELECT 1, COALESCE(SUM(size_bytes), 0) FROM artifacts`
  yield* sql`CREATE TRIGGER artifact_totals_insert AFTER INSERT ON artifacts BEGIN
    UPDATE artifact_totals SET used_bytes = used_bytes + NEW.size_bytes WHERE id = 1;
  END`
  yield* sql`CREATE TRIGGER artifact_totals_delete AFTER DELETE ON artifacts BEGIN
    UPDATE artifact_totals SET used_bytes = used_bytes - OLD.size_bytes WHERE id = 1;
  END`
  yield* sql`CREATE TRIGGER artifact_totals_resize AFTER UPDATE OF size_bytes ON artifacts BEGIN
    UPDATE artifact_totals SET used_bytes = used_bytes + NEW.size_bytes - OLD.size_bytes WHERE id = 1;
  END`
})
