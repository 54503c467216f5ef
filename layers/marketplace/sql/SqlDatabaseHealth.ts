/** DatabaseHealth by a `SELECT 1` with a deadline. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { DatabaseHealth } from "../../../services/marketplace/DatabaseHealth.js"

export const layer = Layer.effect(
  DatabaseHealth,
  Effect.map(SqlClient.SqlClient, (sql) =>
    DatabaseHealth.of({
      check: sql`SELECT 1 AS ok`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as(true),
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Database health check failed", cause), false))
      )
    }))
)
