/**
 * Idempotency keys are scoped to the user alone, not to the user and route:
 * a key reused on another route is the client's mistake, answered 422
 * `idempotency_key_reused`, where it used to run as a fresh request. Of records
 * that share a user and key (possible before), the one with the first route is
 * kept; they expire within 24 hours anyway.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM idempotency_keys WHERE EXISTS (
    SELECT 1 FROM idempotency_keys o
    WHERE o.user_id = idempotency_keys.user_id AND o.idempotency_key = idempotency_keys.idempotency_key
      AND o.route < idempotency_keys.route)`
  yield* sql`CREATE UNIQUE INDEX idempotency_keys_by_user_key ON idempotency_keys (user_id, idempotency_key)`
})
