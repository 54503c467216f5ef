/**
 * AuditLog on SQLite or PostgreSQL. `append` runs on whatever connection the
 * calling fiber holds: inside another store's `sql.withTransaction` it is part
 * of that transaction. States are stored as JSON text.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import type { AuditEntry } from "../../../schema/marketplace/Audit.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import { type Row, text } from "./Rows.js"

const state = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value))
const parsed = (value: unknown): unknown => (value === null || value === undefined ? null : JSON.parse(text(value)))

const toEntry = (row: Row): AuditEntry => ({
  id: text(row.id),
  at: text(row.createdAt),
  actorId: text(row.actorId),
  action: text(row.action),
  targetKind: text(row.targetKind),
  target: text(row.target),
  before: parsed(row.beforeState),
  after: parsed(row.afterState)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const append: AuditLog["Type"]["append"] = (record) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`INSERT INTO audit_log (created_at, actor_id, action, target_kind, target, before_state, after_state) VALUES (
        ${new Date(now).toISOString()}, ${record.actorId}, ${record.action}, ${record.targetKind}, ${record.target},
        ${state(record.before)}, ${state(record.after)})`).pipe(Effect.asVoid, Effect.orDie)

  const list: AuditLog["Type"]["list"] = (query) =>
    Effect.gen(function*() {
      const conditions = [
        query.cursor === undefined ? undefined : sql`id < ${Number(query.cursor)}`,
        query.action === undefined ? undefined : sql`action = ${query.action}`,
        query.actorId === undefined ? undefined : sql`actor_id = ${query.actorId}`,
        query.target === undefined ? undefined : sql`target = ${query.target}`
      ].filter((condition) => condition !== undefined)
      const rows = yield* sql<Row>`SELECT id, created_at, actor_id, action, target_kind, target, before_state, after_state
        FROM audit_log WHERE ${sql.and(conditions)} ORDER BY id DESC LIMIT ${query.limit + 1}`
      const items = rows.slice(0, query.limit).map(toEntry)
      return { items, nextCursor: rows.length > query.limit ? items[items.length - 1]!.id : null }
    }).pipe(Effect.orDie)

  return AuditLog.of({ append, list })
})

export const layer = Layer.effect(AuditLog, make)
