/**
 * The inbox: notices and their actions, waiting approvals, skipped versions.
 * What it acts on (background work, activity, unknown effects, task
 * approvals) is declared in Work.ts.
 *
 * The `inbox` group (routes under /inbox) is outside the OpenAPI description
 * and may change.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString, IntFromString, PathSegment } from "../common/Text.js"
import { Ref } from "./Conversation.js"
import { refusals } from "./Errors.js"
import { LookupId } from "./Instance.js"
import { Authenticated, Surface } from "./Security.js"

// ---------------------------------------------------------------------------
// Notices

/** Every notice action name, as read exactly from the path (never decoded). */
export const noticeActions = [
  "mark-read",
  "mark-unread",
  "dismiss",
  "restore",
  "snooze",
  "unsnooze",
  "suppress",
  "unsuppress",
  "retry",
  "update",
  "skip-version",
  "ask-again"
] as const
export const NoticeAction = Schema.Literal(...noticeActions)
export type NoticeAction = typeof NoticeAction.Type

/** Actions only the app itself performs: asked for over HTTP they are 409 SURFACE_ACTION. */
export const surfaceActions = ["open", "ask-clark", "add-to-context", "review-update", "copy-details"] as const
export const SurfaceAction = Schema.Literal(...surfaceActions)
export type SurfaceAction = typeof SurfaceAction.Type

/** Actions with their own person-only route (reconcile): asked for here they are 403 PERSON_ONLY. */
export const ownRouteActions = ["reconcile-confirmed", "reconcile-failed"] as const

/** Why an action a notice lists cannot be taken now. */
export const Unavailable = Schema.Literal("conversation-gone", "work-gone", "package-gone", "already-current")
export type Unavailable = typeof Unavailable.Type

/** An action as offered on a notice at read time; the app's own actions are listed too. */
export const OfferedNoticeAction = Schema.Struct({
  action: Schema.Union(NoticeAction, SurfaceAction),
  unavailable: Schema.optional(Unavailable)
})

export const Notice = Schema.Struct({
  noticeId: Schema.String,
  kind: Schema.String,
  title: Schema.String,
  body: Schema.String,
  /** The ref that sends this notice into a message (add to context). */
  ref: Ref,
  conversationId: Schema.NullOr(Schema.String),
  workId: Schema.optional(Schema.String),
  taskId: Schema.optional(Schema.String),
  effectId: Schema.optional(Schema.String),
  questionId: Schema.optional(Schema.String),
  package: Schema.optional(Schema.Struct({ kind: Schema.Literal("package", "pi"), name: Schema.String })),
  version: Schema.optional(Schema.String),
  createdAt: DateTimeString,
  readAt: Schema.NullOr(DateTimeString),
  snoozedUntil: Schema.NullOr(DateTimeString),
  dismissedAt: Schema.NullOr(DateTimeString),
  /** Its source (a package's updates, the engine's) is silenced: no new notices of it until unsuppressed. */
  suppressed: Schema.Boolean,
  actions: Schema.Array(OfferedNoticeAction)
}).annotations({ identifier: "Notice" })
export type Notice = typeof Notice.Type

/** One thing a package asks for (an outside-sandbox permission or a capability). */
export const Ask = Schema.Struct({ kind: Schema.String, value: Schema.String, access: Schema.NullOr(Schema.String) })

export const InstallApprovalItem = Schema.Struct({
  kind: Schema.Literal("install-approval"),
  approvalId: Schema.String,
  package: Schema.String,
  version: Schema.String,
  asks: Schema.Array(Ask),
  riskTier: Schema.String,
  operationDigest: Schema.String,
  requestedAt: DateTimeString,
  expiresAt: DateTimeString
}).annotations({ identifier: "InstallApprovalItem" })

export const TaskApprovalItem = Schema.Struct({
  kind: Schema.Literal("task-approval"),
  approvalId: Schema.String,
  taskId: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  summary: Schema.String,
  origin: Surface,
  operationDigest: Schema.String,
  requestedAt: DateTimeString,
  expiresAt: Schema.NullOr(DateTimeString),
  /** The step's whole input, as the card shows it (an offered action's input is at most 1,200 characters). */
  input: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "TaskApprovalItem" })

export const UnknownEffectItem = Schema.Struct({
  kind: Schema.Literal("unknown-effect"),
  effectId: Schema.String,
  taskId: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  summary: Schema.String,
  recordedAt: DateTimeString
}).annotations({ identifier: "UnknownEffectItem" })

export const WaitingItem = Schema.Union(InstallApprovalItem, TaskApprovalItem, UnknownEffectItem)
export type WaitingItem = typeof WaitingItem.Type

export const SkippedVersionKind = Schema.Literal("package", "pi")

export const SkippedVersion = Schema.Struct({
  kind: SkippedVersionKind,
  name: Schema.String,
  version: Schema.String,
  skippedAt: DateTimeString
}).annotations({ identifier: "SkippedVersion" })

export const Inbox = Schema.Struct({
  notices: Schema.Array(Notice),
  waiting: Schema.Array(WaitingItem),
  /** Newest first. */
  skippedVersions: Schema.Array(SkippedVersion),
  /** Notices come a page at a time, newest first; `before` of the next page, null on the last. */
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Inbox" })

export const InboxParams = Schema.Struct({
  limit: Schema.optional(IntFromString(1, 500)),
  before: Schema.optional(Schema.String.pipe(Schema.maxLength(400)))
})
export type Inbox = typeof Inbox.Type

export const NoticePath = Schema.Struct({ id: LookupId })

/** `action` is a plain string: the handler checks it exactly as written in the raw path, undecoded. */
export const NoticeActionPath = Schema.Struct({ id: LookupId, action: Schema.String })

/** ISO-8601 instant with a zone (`Z` or an offset). The 30-day horizon is checked by the handler. */
export const IsoInstant = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/, {
    message: () => "must be an ISO-8601 instant such as 2025-01-31T09:00:00Z"
  }),
  Schema.filter((text) => !Number.isNaN(Date.parse(text)) || "must be a real date and time")
)

/** `{}`, or `{until}` for snooze. */
export const NoticeActionRequest = Schema.Struct({ until: Schema.optional(IsoInstant) }).annotations({
  identifier: "NoticeActionRequest"
})

/** 200: the action was taken, with what it produced. */
export const NoticeActionDone = Schema.Struct({
  noticeId: Schema.String,
  action: NoticeAction,
  outcome: Schema.Literal("done"),
  snoozedUntil: Schema.optional(DateTimeString),
  workId: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String),
  questionId: Schema.optional(Schema.String),
  /** Ask-again of an expired task approval: the new approval and its task. */
  approvalId: Schema.optional(Schema.String),
  taskId: Schema.optional(Schema.String),
  pendingCapabilities: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  deniedCapabilities: Schema.optional(Schema.Int.pipe(Schema.nonNegative()))
}).annotations({ identifier: "NoticeActionDone" })

/** 202 of `update` when the execution mode asks before installing; nothing installed. */
export const NoticeActionApprovalRequired = Schema.Struct({
  noticeId: Schema.String,
  action: NoticeAction,
  outcome: Schema.Literal("approval-required"),
  approvalId: Schema.String
}).annotations({ identifier: "NoticeActionApprovalRequired" })

export const SkipVersionResult = Schema.Struct({
  noticeId: Schema.String,
  kind: SkippedVersionKind,
  name: Schema.String,
  version: Schema.String,
  skipped: Schema.Boolean
}).annotations({ identifier: "SkipVersionResult" })

/** Each part arrives URL-encoded (a scoped package name holds `/`). */
export const SkippedVersionPath = Schema.Struct({
  kind: SkippedVersionKind,
  name: PathSegment(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(214))),
  version: PathSegment(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)))
})

export const SkippedVersionRemoved = Schema.Struct({ removed: Schema.Boolean }).annotations({
  identifier: "SkippedVersionRemoved"
})

/**
 * Inbox routes: outside the OpenAPI description. The notice action route is
 * `Authenticated`: `update` is refused to machine surfaces by the handler
 * (403 PERSON_ONLY) by action name; every other action is open to them.
 */
export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(
    HttpApiEndpoint.get("inbox", "/inbox")
      .setUrlParams(InboxParams)
      .addSuccess(Inbox)
      .addError(refusals("INVALID_INPUT", "NOT_IMPLEMENTED"))
  )
  .add(
    HttpApiEndpoint.post("skipVersion", "/inbox/notices/:id/skip-version")
      .setPath(NoticePath)
      .addSuccess(SkipVersionResult)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "NOT_AN_UPDATE", "NOT_IMPLEMENTED"))
  )
  .add(
    HttpApiEndpoint.post("unskipVersion", "/inbox/notices/:id/unskip-version")
      .setPath(NoticePath)
      .addSuccess(SkipVersionResult)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "NOT_AN_UPDATE", "NOT_IMPLEMENTED"))
  )
  .add(
    HttpApiEndpoint.del("removeSkippedVersion", "/inbox/skipped-versions/:kind/:name/:version")
      .setPath(SkippedVersionPath)
      .addSuccess(SkippedVersionRemoved)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "NOT_IMPLEMENTED"))
  )
  .add(
    HttpApiEndpoint.post("noticeAction", "/inbox/notices/:id/actions/:action")
      .setPath(NoticeActionPath)
      .setPayload(NoticeActionRequest)
      .addSuccess(NoticeActionDone)
      .addSuccess(NoticeActionApprovalRequired, { status: 202 })
      // The refusals of the action table, plus those of what an action does: `update` passes on any install
      // refusal unchanged; `retry` and `ask-again` answer as their own routes do.
      .addError(refusals(
        "INVALID_INPUT", "UNKNOWN_ACTION", "LOCAL_SOURCE_UNREADABLE", "PERSON_ONLY", "POLICY_REFUSED",
        "RESOURCE_NOT_FOUND", "ALREADY_RETRIED", "WORK_NOT_RETRYABLE", "QUESTION_OPEN", "QUESTION_CLOSED",
        "ALREADY_ASKED_AGAIN", "SURFACE_ACTION", "ACTION_NOT_OFFERED", "ACTION_UNAVAILABLE", "ACTION_IN_PROGRESS",
        "UNDO_EXPIRED", "DIGEST_MISMATCH", "DECLARED_REACH_MISMATCH", "BACKGROUND_BUSY", "NOT_IMPLEMENTED",
        "PACKAGE_CACHE_UNAVAILABLE"
      ))
  )
  .middleware(Authenticated)
  .annotate(OpenApi.Exclude, true)
{}
