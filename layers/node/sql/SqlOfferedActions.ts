/**
 * The rows of offered actions and of job presses waiting for approval (migration 0015), decoded with Schemas.
 * Each change of status is one conditional write, so of an app's answer and the node giving up, exactly one wins.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Surface } from "../../../schema/node/Security.js"
import type { OfferedRequest, OfferedStatus } from "../../../services/node/OfferedActions.js"

const Status = Schema.Literal("asked", "requested", "done", "refused", "unknown", "approved-not-performed", "denied")

const Row = Schema.Struct({
  id: Schema.String,
  conversationId: Schema.String,
  instanceId: Schema.String,
  taskId: Schema.String,
  origin: Surface,
  action: Schema.String,
  input: Schema.parseJson(Schema.Unknown),
  operationDigest: Schema.String,
  approvalId: Schema.NullOr(Schema.String),
  effectId: Schema.NullOr(Schema.String),
  status: Status,
  code: Schema.NullOr(Schema.String),
  why: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.parseJson(Schema.Unknown)),
  requestedAt: Schema.String,
  answeredAt: Schema.NullOr(Schema.String)
})

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const toRequest = ({ id, ...row }: typeof Row.Type): OfferedRequest => ({ requestId: id, ...row, result: row.result ?? null })

export const JobApprovalRow = Schema.Struct({
  approvalId: Schema.String,
  conversationId: Schema.String,
  start: Schema.parseJson(Schema.Unknown),
  status: Schema.Literal("asked", "started", "not-started", "denied"),
  jobId: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(decodeRows), Effect.map((list) => list.map(toRequest)), Effect.orDie)
  const first = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.map(rows(query), (list) => Option.fromNullable(list[0]))

  /** Waiting cards: the row asks and its task approval still waits, unexpired. */
  const asking = (conversationId: string, at: string) =>
    sql`o.conversation_id = ${conversationId} AND o.status = 'asked' AND t.status = 'asked' AND t.expires_at > ${at}`

  return {
    insert: (request: OfferedRequest) =>
      Effect.flatMap(
        Schema.encode(Row)({ ...request, id: request.requestId, result: request.result ?? null }),
        (row) => sql`INSERT INTO offered_actions ${sql.insert(row)}`
      ).pipe(Effect.asVoid, Effect.orDie),
    get: (requestId: string) => first(sql`SELECT * FROM offered_actions WHERE id = ${requestId}`),
    byApproval: (approvalId: string) => first(sql`SELECT * FROM offered_actions WHERE approval_id = ${approvalId}`),
    /** The waiting card of exactly this request in the conversation, if one waits. */
    waitingCard: (conversationId: string, operationDigest: string, at: string) =>
      first(sql`SELECT o.* FROM offered_actions o JOIN task_approvals t ON t.id = o.approval_id
        WHERE ${asking(conversationId, at)} AND o.operation_digest = ${operationDigest} ORDER BY o.requested_at LIMIT 1`),
    waitingCards: (conversationId: string, at: string) =>
      sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM offered_actions o JOIN task_approvals t ON t.id = o.approval_id
        WHERE ${asking(conversationId, at)}`.pipe(Effect.map((r) => Number(r[0]?.n ?? 0)), Effect.orDie),
    anyRequested: (conversationId: string) =>
      sql`SELECT 1 AS one FROM offered_actions WHERE conversation_id = ${conversationId} AND status = 'requested' LIMIT 1`.pipe(
        Effect.map((found) => found.length > 0),
        Effect.orDie
      ),
    requested: (conversationId: string, instanceId: string) =>
      rows(sql`SELECT * FROM offered_actions WHERE conversation_id = ${conversationId} AND instance_id = ${instanceId}
        AND status = 'requested' ORDER BY requested_at, id`),
    /** Moves the request from `from` to `to` with what came with it; false when it was not in `from`. */
    settle: (
      requestId: string,
      from: OfferedStatus,
      to: OfferedStatus,
      fields: {
        readonly at: string
        readonly effectId?: string | null | undefined
        readonly code?: string | null | undefined
        readonly why?: string | null | undefined
        readonly result?: unknown
      }
    ) =>
      sql`UPDATE offered_actions SET status = ${to}, answered_at = ${fields.at},
        effect_id = COALESCE(${fields.effectId ?? null}, effect_id), code = ${fields.code ?? null},
        why = ${fields.why ?? null}, result = ${fields.result === undefined ? null : JSON.stringify(fields.result)}
        WHERE id = ${requestId} AND status = ${from} RETURNING id`.pipe(
        Effect.map((changed) => changed.length === 1),
        Effect.orDie
      ),
    /**
     * At start-up: a request still handed over was cut off by the last stop. Its effect is made unknown by the
     * ledger's own start-up; the row says so too, so no app performs it after the restart.
     */
    interruptRequested: (at: string) =>
      sql`UPDATE offered_actions SET status = 'unknown', code = 'ACTION_INTERRUPTED', answered_at = ${at}
        WHERE status = 'requested' RETURNING id`.pipe(Effect.map((changed) => changed.length), Effect.orDie),
    /** A granted card handed to the app: back to `requested`, with its effect. */
    hand: (requestId: string, effectId: string) =>
      sql`UPDATE offered_actions SET status = 'requested', effect_id = ${effectId}
        WHERE id = ${requestId} AND status = 'asked' RETURNING id`.pipe(
        Effect.map((changed) => changed.length === 1),
        Effect.orDie
      )
  }
})

export type OfferedRows = Effect.Effect.Success<typeof make>
