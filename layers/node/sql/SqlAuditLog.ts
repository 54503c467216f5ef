/** AuditLog on the node's SQLite database; triggers refuse updates and deletes. */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer } from "effect"
import { AuditLog } from "../../../services/node/AuditLog.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return AuditLog.of({
    append: (entry) =>
      Effect.gen(function*() {
        const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
        yield* sql`INSERT INTO audit_log ${
          sql.insert({
            at,
            kind: entry.kind,
            conversationId: entry.conversationId ?? null,
            surface: entry.surface ?? null,
            channel: entry.channel ?? null,
            detail: JSON.stringify(entry.detail ?? {})
          })
        }`
      }).pipe(Effect.orDie),
    list: (filter) =>
      sql<Record<string, unknown>>`SELECT * FROM audit_log ${
        filter?.kind === undefined ? sql`` : sql`WHERE kind = ${filter.kind}`
      } ORDER BY id`.pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            id: Number(row.id),
            at: String(row.at),
            kind: String(row.kind),
            conversationId: row.conversationId === null ? undefined : String(row.conversationId),
            surface: row.surface === null ? undefined : String(row.surface),
            channel: row.channel === null ? undefined : String(row.channel),
            detail: JSON.parse(String(row.detail)) as Record<string, unknown>
          }))
        ),
        Effect.orDie
      )
  })
})

export const layer = Layer.effect(AuditLog, make)
