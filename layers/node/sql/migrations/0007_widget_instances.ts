/**
 * Widget instances placed in conversations, with the view state of host-held players beside them (one row per
 * instance, so a view-state write is one conditional update).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // `bindings` holds each binding with its digest as JSON; `props` is the placement's props as JSON.
  yield* sql`CREATE TABLE widget_instances (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    version TEXT NOT NULL,
    content_digest TEXT NOT NULL,
    widget_id TEXT NOT NULL,
    props TEXT NOT NULL,
    revision INTEGER NOT NULL,
    bindings TEXT NOT NULL,
    offered_actions TEXT NOT NULL,
    task_id TEXT,
    placed_at TEXT NOT NULL,
    view_sequence INTEGER,
    view_invocation TEXT,
    view_state TEXT,
    state_revision INTEGER NOT NULL DEFAULT 0
  )`
  yield* sql`CREATE INDEX widget_instances_conversation ON widget_instances (conversation_id, placed_at)`
})
