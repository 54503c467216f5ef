/**
 * Who started each widget file a machine surface created (docs/decisions.md, "Machine-surface widget file
 * writes"): discarding an unfinished file the same asker started is a local write, any other discard destructive.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // `asker` is the surface, or `relay:<connection>` over the relay. Gone with the file.
  yield* sql`CREATE TABLE artifact_starters (
    artifact_id TEXT PRIMARY KEY REFERENCES artifacts (id) ON DELETE CASCADE,
    asker TEXT NOT NULL
  )`
})
