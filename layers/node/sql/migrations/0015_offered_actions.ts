/**
 * Offered actions (spec, "Actions the assistant asks a widget to perform") and job presses waiting for the person
 * (spec, "Long-running package jobs"). The approval card itself is a row of `task_approvals`; these rows say what
 * the card is about and what became of it, so the decide route can dispatch by its approval id.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // One row per action the assistant asked a widget to perform. `status`: asked (its card waits), requested
  // (handed to the app), done, refused, unknown (the widget failed or never answered: the ledger's unknown effect),
  // approved-not-performed, denied. `input` and `result` are JSON.
  yield* sql`CREATE TABLE offered_actions (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    action TEXT NOT NULL,
    input TEXT NOT NULL,
    operation_digest TEXT NOT NULL,
    approval_id TEXT,
    effect_id TEXT,
    status TEXT NOT NULL,
    code TEXT,
    why TEXT,
    result TEXT,
    requested_at TEXT NOT NULL,
    answered_at TEXT
  )`
  yield* sql`CREATE INDEX offered_actions_instance ON offered_actions (conversation_id, instance_id, status)`
  yield* sql`CREATE UNIQUE INDEX offered_actions_approval ON offered_actions (approval_id) WHERE approval_id IS NOT NULL`
  // A job press whose tool the execution policy asked about: the job it starts once granted. `start` is JSON.
  yield* sql`CREATE TABLE job_approvals (
    approval_id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    start TEXT NOT NULL,
    status TEXT NOT NULL,
    job_id TEXT,
    created_at TEXT NOT NULL
  )`
})
