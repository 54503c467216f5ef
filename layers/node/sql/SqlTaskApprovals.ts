/**
 * TaskApprovals on the node's SQLite database; rows decoded with Schemas. An approval's expiry writes its
 * notice in the same transaction, as an install approval's does (SqlPackageRecords), so no expiry goes unsaid.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, FiberMap, Layer, Option, Schema } from "effect"
import { RiskClass } from "../../../schema/node/Manifest.js"
import { Surface } from "../../../schema/node/Security.js"
import { type TaskApproval, TaskApprovals } from "../../../services/node/TaskApprovals.js"

const Row = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  conversationId: Schema.String,
  origin: Surface,
  packageId: Schema.String,
  packageDigest: Schema.String,
  tool: Schema.String,
  risk: RiskClass,
  input: Schema.parseJson(Schema.Unknown),
  operationDigest: Schema.String,
  status: Schema.Literal("asked", "granted", "used", "denied", "expired"),
  requestedAt: Schema.String,
  expiresAt: Schema.String,
  decidedAt: Schema.NullOr(Schema.String),
  continuedAs: Schema.NullOr(Schema.String)
})

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const toApproval = ({ id, ...row }: typeof Row.Type): TaskApproval => ({ approvalId: id, ...row })

/** The notice of an expired task approval: one per approval. */
export const expiredNoticeId = (approvalId: string) => `ntc_${approvalId}`

const bare = (packageId: string) => packageId.replace(/^@[^/]+\//, "")

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(decodeRows), Effect.map((list) => list.map(toApproval)), Effect.orDie)
  const first = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.map(rows(query), (list) => Option.fromNullable(list[0]))
  /**
   * Expiries on the node's clock, a fiber per waiting approval (keyed by id), whoever asked (a turn's step, a
   * machine surface's file card): the notice says so when the time is up, not when someone decides too late.
   */
  const expiries = yield* FiberMap.make<string>()

  const transition: TaskApprovals["Type"]["transition"] = (approvalId, from, to, at) =>
    Effect.gen(function*() {
      const changed = yield* sql`UPDATE task_approvals SET status = ${to}, decided_at = COALESCE(decided_at, ${at})
        WHERE id = ${approvalId} AND ${sql.in("status", from)} RETURNING *`.pipe(Effect.flatMap(decodeRows))
      const approval = changed[0]
      if (approval === undefined) return false
      if (to === "expired") {
        yield* sql`INSERT INTO notices ${
          sql.insert({
            id: expiredNoticeId(approvalId),
            kind: "task-approval-expired",
            conversationId: approval.conversationId,
            subjectId: approvalId,
            data: JSON.stringify({
              taskId: approval.taskId,
              packageId: approval.packageId,
              packageDigest: approval.packageDigest,
              tool: approval.tool,
              origin: approval.origin,
              summary: `${bare(approval.packageId)} · ${approval.tool}`
            }),
            state: "unread",
            createdAt: at
          })
        } ON CONFLICT (id) DO NOTHING`
      }
      return true
    }).pipe(
      sql.withTransaction,
      Effect.orDie,
      // Decided (granted, denied): its expiry has nothing left to do. The expiry's own write keeps its fiber.
      Effect.tap((moved) => moved && to !== "expired" ? FiberMap.remove(expiries, approvalId) : Effect.void)
    )

  const expireOnTime = (approval: { readonly approvalId: string; readonly expiresAt: string }) =>
    Effect.gen(function*() {
      const remaining = Date.parse(approval.expiresAt) - (yield* Clock.currentTimeMillis)
      yield* FiberMap.run(
        expiries,
        approval.approvalId,
        Effect.sleep(Duration.millis(Math.max(0, remaining))).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.flatMap((at) => transition(approval.approvalId, ["asked"], "expired", DateTime.formatIso(DateTime.unsafeMake(at))))
        )
      )
    })

  const waiting = rows(sql`SELECT * FROM task_approvals WHERE status = 'asked' ORDER BY requested_at, id`)
  // Restored at start: those that fell due while the node was down expire at once.
  yield* Effect.flatMap(waiting, Effect.forEach(expireOnTime, { discard: true }))

  return TaskApprovals.of({
    insert: ({ approvalId, ...approval }) =>
      Effect.flatMap(Schema.encode(Row)({ id: approvalId, ...approval }), (row) =>
        sql`INSERT INTO task_approvals ${sql.insert(row)}`).pipe(
        Effect.orDie,
        Effect.zipRight(approval.status === "asked" ? expireOnTime({ approvalId, expiresAt: approval.expiresAt }) : Effect.void)
      ),
    get: (approvalId) => first(sql`SELECT * FROM task_approvals WHERE id = ${approvalId}`),
    waiting,
    grantedFor: (conversationId, operationDigest) =>
      first(sql`SELECT * FROM task_approvals WHERE status = 'granted' AND conversation_id = ${conversationId}
        AND operation_digest = ${operationDigest} ORDER BY decided_at LIMIT 1`),
    askAgain: (expiredId, approval) =>
      Effect.gen(function*() {
        // The claim: the expired approval's notice takes the new id once; a second press finds it taken.
        const claimed = yield* sql`UPDATE notices SET data = json_set(data, '$.askedAgainAs', ${approval.approvalId})
          WHERE id = ${expiredNoticeId(expiredId)} AND json_extract(data, '$.askedAgainAs') IS NULL RETURNING id`
        if (claimed.length !== 1) return false
        const { approvalId: id, ...fields } = approval
        const row = yield* Schema.encode(Row)({ id, ...fields })
        yield* sql`INSERT INTO task_approvals ${sql.insert(row)}`
        return true
      }).pipe(
        sql.withTransaction,
        Effect.orDie,
        Effect.tap((asked) => (asked ? expireOnTime(approval) : Effect.void))
      ),
    transition,
    continued: (approvalId, taskId) =>
      sql`UPDATE task_approvals SET continued_as = ${taskId} WHERE id = ${approvalId}`.pipe(Effect.asVoid, Effect.orDie),
    list: (limit) => rows(sql`SELECT * FROM task_approvals ORDER BY requested_at DESC, id DESC LIMIT ${limit}`)
  })
})

export const layer = Layer.scoped(TaskApprovals, make)
