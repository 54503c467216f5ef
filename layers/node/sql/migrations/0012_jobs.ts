/**
 * Package jobs (spec, "Long-running package jobs"): one row per job, written when it starts and once more when
 * it ends. `instance_id`, `package_id`, `version` and `tool` are who may read it (the widget whose button started
 * it, under that package version and capability); a restart ends every row still running as failed.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // `progress`, `output`, `result_refs` and `error` are JSON; `input` is kept for GET /work and never re-sent.
  yield* sql`CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    binding_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    version TEXT NOT NULL,
    tool TEXT NOT NULL,
    origin TEXT NOT NULL,
    status TEXT NOT NULL,
    progress TEXT,
    output TEXT,
    result_refs TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    ended_at TEXT
  )`
  yield* sql`CREATE INDEX jobs_instance ON jobs (conversation_id, instance_id, created_at DESC)`
  yield* sql`CREATE INDEX jobs_unended ON jobs (status) WHERE ended_at IS NULL`
})
