/**
 * JobApprovals: the execution policy of a job press, before `Jobs.start`. A deny rule refuses it; when the
 * execution mode asks (a risky job tool pressed by another program under `machineTurns = ask`), a task approval is
 * the card and the job waits beside it in `job_approvals`; the decide route's grant starts it, once.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, Layer, Option, Schema } from "effect"
import { DenyRules, MachineTurns } from "../../../schema/node/Preferences.js"
import { makeId } from "../../../services/common/Ids.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { decide } from "../../../services/node/ExecutionPolicy.js"
import { JobApprovals } from "../../../services/node/JobApprovals.js"
import { type JobStart, Jobs } from "../../../services/node/Jobs.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"
import { operationDigest } from "../packages/CallWords.js"
import { defaultApprovalTtl } from "../packages/PackageTools.js"
import { JobApprovalRow } from "../sql/SqlOfferedActions.js"

const decodeRows = Schema.decodeUnknown(Schema.Array(JobApprovalRow))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const preferences = yield* PreferenceStore
  const approvals = yield* TaskApprovals
  const jobs = yield* Jobs
  const audit = yield* AuditLog
  const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

  const preference = <A, I>(key: string, schema: Schema.Schema<A, I>, fallback: A) =>
    Effect.map(preferences.get(key), (state) =>
      Option.getOrElse(Option.flatMap(state, (s) => Schema.decodeUnknownOption(schema)(s.value)), () => fallback))

  const first = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(decodeRows), Effect.map((list) => Option.fromNullable(list[0])), Effect.orDie)

  const gate: JobApprovals["Type"]["gate"] = (start, about) =>
    Effect.gen(function*() {
      const verdict = decide(
        { origin: start.origin, packageId: start.packageId, tool: start.tool, risk: about.risk },
        {
          machineTurns: yield* preference("execution.machineTurns", MachineTurns, "default"),
          denyRules: yield* preference("execution.denyRules", DenyRules, []),
          granted: false
        }
      )
      if (verdict._tag !== "Ask") return verdict
      const digest = operationDigest(start.packageId, start.tool, start.input, about.packageDigest)
      const at = yield* Clock.currentTimeMillis
      // The same press while its card waits gets that card: one card, one job.
      const same = yield* first(sql`SELECT j.* FROM job_approvals j JOIN task_approvals t ON t.id = j.approval_id
        WHERE j.conversation_id = ${start.conversationId} AND j.status = 'asked' AND t.status = 'asked'
        AND t.expires_at > ${iso(at)} AND t.operation_digest = ${digest} ORDER BY j.created_at LIMIT 1`)
      if (Option.isSome(same)) return { _tag: "Asked" as const, approvalId: same.value.approvalId }
      const approvalId = yield* makeId("tap")
      yield* approvals.insert({
        approvalId,
        taskId: about.taskId,
        conversationId: start.conversationId,
        origin: start.origin,
        packageId: start.packageId,
        packageDigest: about.packageDigest,
        tool: start.tool,
        risk: about.risk,
        input: start.input,
        operationDigest: digest,
        status: "asked",
        requestedAt: iso(at),
        expiresAt: iso(at + Duration.toMillis(defaultApprovalTtl)),
        decidedAt: null,
        continuedAs: null
      })
      yield* Effect.flatMap(
        Schema.encode(JobApprovalRow)({
          approvalId,
          conversationId: start.conversationId,
          start,
          status: "asked",
          jobId: null,
          createdAt: iso(at)
        }),
        (row) => sql`INSERT INTO job_approvals ${sql.insert(row)}`
      ).pipe(Effect.orDie)
      yield* audit.append({
        kind: "job-approval-asked",
        conversationId: start.conversationId,
        surface: start.origin,
        detail: { approvalId, instanceId: start.instanceId, packageId: start.packageId, tool: start.tool, operationDigest: digest }
      })
      return { _tag: "Asked" as const, approvalId }
    })

  const decided: JobApprovals["Type"]["decided"] = (approval) =>
    Effect.gen(function*() {
      const found = yield* first(sql`SELECT * FROM job_approvals WHERE approval_id = ${approval.approvalId}`)
      if (Option.isNone(found)) return Option.none()
      const at = iso(yield* Clock.currentTimeMillis)
      if (approval.status !== "granted") {
        yield* sql`UPDATE job_approvals SET status = 'denied' WHERE approval_id = ${approval.approvalId} AND status = 'asked'`.pipe(Effect.orDie)
        return Option.some({ jobId: null })
      }
      // One conditional write claims the start: of two grants racing, one job.
      const claimed = yield* sql`UPDATE job_approvals SET status = 'not-started' WHERE approval_id = ${approval.approvalId}
        AND status = 'asked' RETURNING approval_id`.pipe(Effect.orDie)
      if (claimed.length === 0) return Option.some({ jobId: found.value.jobId })
      yield* approvals.transition(approval.approvalId, ["granted"], "used", at)
      const started = yield* Effect.either(jobs.start(found.value.start as JobStart))
      if (started._tag === "Left") return Option.some({ jobId: null })
      const jobId = started.right.jobId
      yield* sql`UPDATE job_approvals SET status = 'started', job_id = ${jobId} WHERE approval_id = ${approval.approvalId}`.pipe(Effect.orDie)
      return Option.some({ jobId })
    })

  return JobApprovals.of({ gate, decided })
})

export const layer = Layer.effect(JobApprovals, make)
