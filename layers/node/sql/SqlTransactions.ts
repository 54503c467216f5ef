/** Transactions on the node's SQLite database: every store on it shares the one connection. */
import { SqlClient, SqlError } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Transactions } from "../../../services/node/Transactions.js"

export const layer = Layer.effect(
  Transactions,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Transactions.of({
      // A failed BEGIN or COMMIT is the database failing, like the stores' own statements: a defect.
      atomically: (effect) => sql.withTransaction(effect).pipe(Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die))
    }))
)
