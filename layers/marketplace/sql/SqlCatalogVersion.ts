/** CatalogVersion on SQLite or PostgreSQL (see migration 0004). */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { CatalogVersion } from "../../../services/marketplace/CatalogVersion.js"
import { type Row, text } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // On SQLite every write of this process goes through its one connection
  // (`total_changes`), and `data_version` moves when another process commits.
  // Any write moves them, not only catalogue writes: a spurious miss, never a stale hit.
  const query = sql.onDialectOrElse({
    pg: () => sql<Row>`SELECT version FROM catalog_version WHERE id = 1`,
    orElse: () =>
      sql<Row>`SELECT total_changes() || '.' || (SELECT data_version FROM pragma_data_version) AS version`
  })
  return CatalogVersion.of({
    current: query.pipe(Effect.map(([row]) => text(row?.version)), Effect.orDie)
  })
})

export const layer = Layer.effect(CatalogVersion, make)
