/**
 * The indexer's queue and the submissions that ask for it. One job per package and requested version
 * (`requested` is '' for the registry's latest): a submission, a re-check and a curator's re-index of the same
 * version share it, and a finished job is queued again rather than copied. A job being indexed holds a lease
 * (`lease_until`); a replica that dies mid-way leaves it to expire, and another replica takes the job again.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE index_jobs (
    id TEXT PRIMARY KEY,
    package_name TEXT NOT NULL,
    requested TEXT NOT NULL,
    version TEXT,
    reason TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    attempts INTEGER NOT NULL,
    run_after TEXT NOT NULL,
    lease_until TEXT,
    worker TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (package_name, requested)
  )`
  yield* sql`CREATE INDEX index_jobs_ready ON index_jobs (status, run_after)`
  yield* sql`CREATE TABLE submissions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    job_id TEXT NOT NULL REFERENCES index_jobs (id) ON DELETE CASCADE,
    package_name TEXT NOT NULL,
    requested TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (user_id, package_name, requested)
  )`
  yield* sql`CREATE INDEX submissions_by_user ON submissions (user_id, created_at, id)`
})
