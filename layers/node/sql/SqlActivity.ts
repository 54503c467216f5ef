/**
 * Activity on the node's SQLite database: the audit log read newest first (with each row's task and what became
 * of it), and the turns' tasks with their waiting approvals; unknown effects come from the ledger's own file.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Schema } from "effect"
import type { ActivityRow, WorkItem } from "../../../schema/node/Work.js"
import { Surface } from "../../../schema/node/Security.js"
import { Activity, summaryOf, taskStatus } from "../../../services/node/Activity.js"
import { Ledger } from "../../../services/node/Ledger.js"

const AuditRow = Schema.Struct({
  id: Schema.Number,
  at: Schema.String,
  kind: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  surface: Surface,
  channel: Schema.NullOr(Schema.Literal("text", "voice", "voice-agent")),
  detail: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  taskId: Schema.NullOr(Schema.String),
  turnStatus: Schema.NullOr(Schema.String),
  approvalStatus: Schema.NullOr(Schema.String)
})

const TaskRow = Schema.Struct({
  taskId: Schema.String,
  conversationId: Schema.String,
  origin: Schema.NullOr(Surface),
  blocks: Schema.parseJson(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) }))),
  createdAt: Schema.String,
  messageStatus: Schema.String,
  replyStatus: Schema.NullOr(Schema.String),
  replyCreatedAt: Schema.NullOr(Schema.String),
  replyUpdatedAt: Schema.NullOr(Schema.String),
  approvalWaiting: Schema.NullOr(Schema.String),
  retryOf: Schema.NullOr(Schema.String),
  retriedAs: Schema.NullOr(Schema.String)
})

/** Cursor: the audit row id, as text. */
const cursorOf = (before: string | undefined) =>
  before === undefined ? Option.none() : Option.filter(Option.some(Number(before)), (n) => Number.isSafeInteger(n) && n > 0)

const titleOf = (blocks: typeof TaskRow.Type["blocks"]) => {
  const text = blocks.filter((b) => b.type === "text").map((b) => b.text ?? "").join(" ").replace(/\s+/g, " ").trim()
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

const finished = new Set(["completed", "failed", "cancelled"])

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ledger = yield* Ledger

  const activity: Activity["Type"]["activity"] = ({ before, limit }) =>
    Effect.gen(function*() {
      const cursor = cursorOf(before)
      // The row's task: named by its detail, or the task of the message it records.
      const rows = yield* sql`
        SELECT a.id, a.at, a.kind, a.conversation_id, a.surface, a.channel, a.detail,
          COALESCE(json_extract(a.detail, '$.taskId'), m.task_id) AS task_id,
          (SELECT r.status FROM messages r WHERE r.task_id = COALESCE(json_extract(a.detail, '$.taskId'), m.task_id)
            AND r.role = 'assistant' AND r.host_written IS NULL LIMIT 1) AS turn_status,
          (SELECT t.status FROM task_approvals t WHERE t.id = json_extract(a.detail, '$.approvalId')) AS approval_status
        FROM audit_log a
        LEFT JOIN messages m ON a.kind = 'message' AND m.id = json_extract(a.detail, '$.messageId')
        WHERE a.surface IS NOT NULL ${Option.match(cursor, { onNone: () => sql``, onSome: (id) => sql`AND a.id < ${id}` })}
        ORDER BY a.id DESC LIMIT ${limit + 1}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(AuditRow))),
        Effect.orDie
      )
      const page = rows.slice(0, limit).map((row): ActivityRow => {
        const status = typeof row.detail.status === "string" ? row.detail.status : null
        return {
          activityId: `act_${row.id}`,
          at: row.at,
          origin: row.surface,
          channel: row.channel,
          kind: row.kind,
          summary: summaryOf(row.kind, row.detail),
          conversationId: row.conversationId,
          taskId: row.taskId,
          outcome: row.kind === "message"
            ? row.turnStatus
            : row.kind.startsWith("task-approval")
            ? row.approvalStatus
            : status ?? (typeof row.detail.outcome === "string" ? row.detail.outcome : null)
        }
      })
      return { activity: page, nextCursor: rows.length > limit ? String(rows[limit - 1]!.id) : null }
    })

  const work = ({ conversationId, limit, workId }: { conversationId?: string | undefined; limit: number; workId?: string }) =>
    Effect.gen(function*() {
      const now = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
      // One row per task: its first user message, its reply (the host's own ask-again lines are not replies).
      const rows = yield* sql`
        SELECT u.task_id, u.conversation_id, u.origin, u.blocks, u.created_at, u.status AS message_status,
          r.status AS reply_status, r.created_at AS reply_created_at, r.updated_at AS reply_updated_at,
          (SELECT t.id FROM task_approvals t WHERE t.task_id = u.task_id AND t.status = 'asked'
            AND t.expires_at > ${now} ORDER BY t.requested_at LIMIT 1) AS approval_waiting,
          (SELECT w.work_id FROM work_retries w WHERE w.retried_as = u.task_id) AS retry_of,
          (SELECT w.retried_as FROM work_retries w WHERE w.work_id = u.task_id) AS retried_as
        FROM messages u
        LEFT JOIN messages r ON r.task_id = u.task_id AND r.role = 'assistant' AND r.host_written IS NULL
        WHERE u.role = 'user' AND u.task_id IS NOT NULL
          ${conversationId === undefined ? sql`` : sql`AND u.conversation_id = ${conversationId}`}
          ${workId === undefined ? sql`` : sql`AND u.task_id = ${workId}`}
          AND u.seq = (SELECT MIN(f.seq) FROM messages f
            WHERE f.conversation_id = u.conversation_id AND f.task_id = u.task_id AND f.role = 'user')
        ORDER BY u.created_at DESC, u.rowid DESC LIMIT ${limit}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(TaskRow))),
        Effect.orDie
      )
      const unknown = new Map((yield* ledger.unknownEffects).map((effect) => [effect.taskId, effect.effectId]))
      return rows.map((row): WorkItem => {
        const unknownEffect = unknown.get(row.taskId) ?? null
        const status = taskStatus({ ...row, unknownEffect })
        return {
          workId: row.taskId,
          kind: "turn",
          taskId: row.taskId,
          status,
          title: titleOf(row.blocks),
          conversationId: row.conversationId,
          origin: row.origin ?? "person",
          createdAt: row.createdAt,
          ...(row.replyCreatedAt === null ? {} : { startedAt: row.replyCreatedAt }),
          ...(finished.has(status) && row.replyUpdatedAt !== null ? { endedAt: row.replyUpdatedAt } : {}),
          ...(row.retryOf === null ? {} : { retryOf: row.retryOf }),
          ...(row.retriedAs === null ? {} : { retriedAs: row.retriedAs }),
          ...(row.approvalWaiting !== null
            ? { waitingFor: { kind: "task-approval", approvalId: row.approvalWaiting } as const }
            : unknownEffect !== null
            ? { waitingFor: { kind: "unknown-effect", effectId: unknownEffect } as const }
            : {})
        }
      })
    })

  const workItem: Activity["Type"]["workItem"] = (workId) =>
    Effect.map(work({ workId, limit: 1 }), (items) => Option.fromNullable(items[0]))

  return Activity.of({ activity, work, workItem })
})

export const layer = Layer.effect(Activity, make)
