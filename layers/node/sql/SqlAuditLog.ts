/** AuditLog on the node's SQLite database; triggers refuse updates and deletes. */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { type AuditEntry, AuditLog } from "../../../services/node/AuditLog.js"
import * as Direct from "./Direct.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Appends in a unit (a press's closing one, a turn's): without the client's per-statement span (Direct.ts).
  const run = Direct.run
  const row = (at: string, entry: AuditEntry) => ({
    at,
    kind: entry.kind,
    conversationId: entry.conversationId ?? null,
    surface: entry.surface ?? null,
    channel: entry.channel ?? null,
    detail: JSON.stringify(entry.detail ?? {})
  })
  // What DateTime.formatIso writes for a UTC instant, without making a DateTime first: every message and audit
  // entry takes one, a start two.
  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())
  return AuditLog.of({
    append: (entry) =>
      Effect.flatMap(now, (at) => run(sql`INSERT INTO audit_log ${sql.insert(row(at, entry))}`)).pipe(Effect.asVoid, Effect.orDie),
    // One multi-row INSERT: one statement, and one update of the AUTOINCREMENT counter, for all of them.
    appendAll: (entries) =>
      entries.length === 0
        ? Effect.void
        : Effect.flatMap(now, (at) => run(sql`INSERT INTO audit_log ${sql.insert(entries.map((entry) => row(at, entry)))}`)).pipe(
          Effect.asVoid,
          Effect.orDie
        ),
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
