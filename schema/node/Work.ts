/**
 * Background work, the activity log, unknown effects and task approvals: the
 * `work` group, part of the stable surface.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString, IntFromString } from "../common/Text.js"
import { refusals } from "./Errors.js"
import { LookupId } from "./Instance.js"
import { Job, JobStatus } from "./Job.js"
import { Authenticated, PersonOnly, Surface } from "./Security.js"

// ---------------------------------------------------------------------------
// Background work and activity

/** `turn`: a task of the turn engine (a message's turn), with its origin and state (docs/decisions.md, "Activity and work"). */
export const WorkKind = Schema.Literal("background", "job", "turn")

/** What a task waits for: the person's decision on a risky step, or their answer about an unknown effect. */
export const WaitingFor = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("task-approval"), approvalId: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("unknown-effect"), effectId: Schema.String })
)

export const WorkItem = Schema.Struct({
  workId: Schema.String,
  kind: WorkKind,
  status: JobStatus,
  title: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  origin: Surface,
  createdAt: DateTimeString,
  startedAt: Schema.optional(DateTimeString),
  endedAt: Schema.optional(DateTimeString),
  retryOf: Schema.optional(Schema.String),
  retriedAs: Schema.optional(Schema.String),
  /** A turn's task: its id (also `workId`) and what it waits for when its status is `waiting`. */
  taskId: Schema.optional(Schema.String),
  waitingFor: Schema.optional(WaitingFor),
  /** Present for package jobs: the job as the widget reads it. */
  job: Schema.optional(Job)
}).annotations({ identifier: "WorkItem" })
export type WorkItem = typeof WorkItem.Type

export const WorkParams = Schema.Struct({
  conversationId: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  limit: Schema.optional(IntFromString(1, 200))
})

export const WorkList = Schema.Struct({ work: Schema.Array(WorkItem) }).annotations({ identifier: "WorkList" })

export const WorkPath = Schema.Struct({ id: LookupId })

/** 202 of a retry: new work with its own id, same request, same conversation. */
export const WorkRetried = Schema.Struct({
  accepted: Schema.Literal(true),
  workId: Schema.String,
  retryOf: Schema.String
}).annotations({ identifier: "WorkRetried" })

/** 202 of a cancel, as for a widget's job. */
export const WorkCancelAccepted = Schema.Struct({ accepted: Schema.Boolean, workId: Schema.String }).annotations({
  identifier: "WorkCancelAccepted"
})

export const ActivityRow = Schema.Struct({
  activityId: Schema.String,
  at: DateTimeString,
  origin: Surface,
  /** `voice-agent`: what the agent did while answering something spoken, apart from the person's own `voice`. */
  channel: Schema.NullOr(Schema.Literal("text", "voice", "voice-agent")),
  kind: Schema.String,
  summary: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  taskId: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ActivityRow" })
export type ActivityRow = typeof ActivityRow.Type

/** Newest first; `before` is the `nextCursor` of the previous page. */
export const ActivityParams = Schema.Struct({
  limit: Schema.optional(IntFromString(1, 200)),
  before: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

export const ActivityPage = Schema.Struct({
  activity: Schema.Array(ActivityRow),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ActivityPage" })

// ---------------------------------------------------------------------------
// Unknown effects and task approvals

export const EffectPath = Schema.Struct({ effectId: LookupId })

export const ReconcileOutcome = Schema.Literal("confirmed", "failed")
/** Stored as sent; proves nothing. */
export const ReconcileSource = Schema.Literal("click", "chat", "voice")

export const ReconcileRequest = Schema.Struct({
  outcome: ReconcileOutcome,
  source: Schema.optional(ReconcileSource)
}).annotations({ identifier: "ReconcileRequest" })

/** The recorded answer: who gave it and when; it cannot be changed. */
export const Reconciled = Schema.Struct({
  effectId: Schema.String,
  outcome: ReconcileOutcome,
  source: Schema.NullOr(ReconcileSource),
  reconciledAt: DateTimeString,
  reconciledBy: Surface,
  taskId: Schema.NullOr(Schema.String),
  taskStatus: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Reconciled" })

export const Decision = Schema.Literal("granted", "denied")
export type Decision = typeof Decision.Type

/** `digest` is the `operationDigest` shown in the inbox. */
export const DecisionRequest = Schema.Struct({
  decision: Decision,
  digest: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /**
   * The widget instances the deciding page shows (docs/decisions.md, "Offered actions and job approvals"): an
   * offered action's card granted from a page that shows its widget is performed; absent (the inbox) or without
   * it, the grant is recorded as approved, not performed, and nothing is sent.
   */
  shownInstanceIds: Schema.optional(Schema.Array(LookupId).pipe(Schema.maxItems(200)))
}).annotations({ identifier: "DecisionRequest" })

export const TaskApprovalPath = Schema.Struct({ taskId: LookupId, approvalId: LookupId })

/** `redispatched` says whether the node accepted the run (always false on a denial). */
export const TaskApprovalDecided = Schema.Struct({
  taskId: Schema.String,
  approvalId: Schema.String,
  decision: Decision,
  redispatched: Schema.Boolean,
  /** An offered action's card: whether the action was handed to the widget, and its request. */
  performed: Schema.optional(Schema.Boolean),
  requestId: Schema.optional(Schema.String),
  /** A job press's card: the job the grant started (null when the node could not start it). */
  jobId: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({ identifier: "TaskApprovalDecided" })

export class WorkGroup extends HttpApiGroup.make("work")
  .add(
    HttpApiEndpoint.get("list", "/work")
      .setUrlParams(WorkParams)
      .addSuccess(WorkList)
      .addError(refusals("INVALID_INPUT", "NOT_IMPLEMENTED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("retry", "/work/:id/retry")
      .setPath(WorkPath)
      .addSuccess(WorkRetried, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "RESOURCE_NOT_FOUND", "ALREADY_RETRIED", "WORK_NOT_RETRYABLE", "BACKGROUND_BUSY",
        "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/work/:id/cancel")
      .setPath(WorkPath)
      .addSuccess(WorkCancelAccepted, { status: 202 })
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "JOB_NOT_RUNNING", "NOT_IMPLEMENTED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("activity", "/activity")
      .setUrlParams(ActivityParams)
      .addSuccess(ActivityPage)
      .addError(refusals("INVALID_INPUT", "NOT_IMPLEMENTED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("reconcile", "/effects/:effectId/reconcile")
      .setPath(EffectPath)
      .setPayload(ReconcileRequest)
      .addSuccess(Reconciled)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "EFFECT_NOT_UNKNOWN", "LEDGER_UNAVAILABLE", "NOT_IMPLEMENTED"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("decideTaskApproval", "/tasks/:taskId/approvals/:approvalId/decide")
      .setPath(TaskApprovalPath)
      .setPayload(DecisionRequest)
      .addSuccess(TaskApprovalDecided)
      .addError(refusals(
        "INVALID_INPUT", "APPROVAL_FORGED", "RESOURCE_NOT_FOUND", "DIGEST_MISMATCH", "APPROVAL_ALREADY_DECIDED",
        "APPROVAL_EXPIRED", "NOT_IMPLEMENTED"
      ))
      .middleware(PersonOnly)
  )
{}
