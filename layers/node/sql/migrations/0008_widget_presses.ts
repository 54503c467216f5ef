/** Widget presses by invocation id, with their stored answers, and the semantic description each widget published. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // One row per invocation id of an instance: the primary key is what keeps an id from being sent twice.
  yield* sql`CREATE TABLE widget_presses (
    instance_id TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    action_binding_id TEXT NOT NULL,
    status TEXT NOT NULL,
    answer TEXT,
    PRIMARY KEY (instance_id, invocation_id)
  )`
  yield* sql`CREATE INDEX widget_presses_running ON widget_presses (status, conversation_id)`

  yield* sql`CREATE TABLE widget_semantics (
    instance_id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    publish_revision INTEGER NOT NULL,
    summary TEXT NOT NULL,
    selected_ids TEXT NOT NULL,
    "values" TEXT,
    published_at TEXT NOT NULL
  )`
})
