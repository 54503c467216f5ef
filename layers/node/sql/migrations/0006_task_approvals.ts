/** Task approvals: risky steps of turns from other programs, waiting for the person; tasks found by their messages. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // `input` is the step's whole input as JSON: the card shows it, and the grant is bound to its digest.
  yield* sql`CREATE TABLE task_approvals (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    origin TEXT NOT NULL,
    package_id TEXT NOT NULL,
    package_digest TEXT NOT NULL,
    tool TEXT NOT NULL,
    risk TEXT NOT NULL,
    input TEXT NOT NULL,
    operation_digest TEXT NOT NULL,
    status TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    decided_at TEXT,
    continued_as TEXT
  )`
  yield* sql`CREATE INDEX task_approvals_status ON task_approvals (status, conversation_id, operation_digest)`
  yield* sql`CREATE INDEX task_approvals_task ON task_approvals (task_id)`
  // GET /work reads the turns' tasks by their messages.
  yield* sql`CREATE INDEX messages_by_task ON messages (task_id)`
})
