/**
 * Refusals of the inbox's notice actions and of background work's retry and cancel. None knows an HTTP status:
 * src/node/http/Errors.ts gives each its wire code.
 */
import { Schema } from "effect"
import { Unavailable } from "../../schema/node/Inbox.js"

/** Not a notice action, as written in the raw path (a percent-encoded name included). */
export class UnknownNoticeAction extends Schema.TaggedError<UnknownNoticeAction>()("UnknownNoticeAction", {
  /** A short prefix of what was sent. */
  given: Schema.String
}) {}

/** An action only the app performs itself (open, ask-clark, add-to-context, review-update, copy-details). */
export class SurfaceOnlyAction extends Schema.TaggedError<SurfaceOnlyAction>()("SurfaceOnlyAction", {
  action: Schema.String
}) {}

export class NoticeNotFound extends Schema.TaggedError<NoticeNotFound>()("NoticeNotFound", {
  noticeId: Schema.String
}) {}

export class ActionNotOffered extends Schema.TaggedError<ActionNotOffered>()("ActionNotOffered", {
  noticeId: Schema.String,
  action: Schema.String
}) {}

export class ActionUnavailable extends Schema.TaggedError<ActionUnavailable>()("ActionUnavailable", {
  noticeId: Schema.String,
  action: Schema.String,
  reason: Unavailable
}) {}

/** The notice's update is installing now. */
export class ActionInProgress extends Schema.TaggedError<ActionInProgress>()("ActionInProgress", {
  noticeId: Schema.String,
  action: Schema.String
}) {}

export class UndoExpired extends Schema.TaggedError<UndoExpired>()("UndoExpired", {
  noticeId: Schema.String,
  dismissedAt: Schema.String
}) {}

/** Snooze needs `until`, in the future and at most 30 days ahead. */
export class SnoozeInvalid extends Schema.TaggedError<SnoozeInvalid>()("SnoozeInvalid", {
  problem: Schema.Literal("missing", "past", "too-far")
}) {}

export class NotAnUpdate extends Schema.TaggedError<NotAnUpdate>()("NotAnUpdate", {
  noticeId: Schema.String,
  kind: Schema.String
}) {}

export class SkippedVersionNotFound extends Schema.TaggedError<SkippedVersionNotFound>()("SkippedVersionNotFound", {
  kind: Schema.String,
  name: Schema.String,
  version: Schema.String
}) {}

export class WorkNotFound extends Schema.TaggedError<WorkNotFound>()("WorkNotFound", {
  workId: Schema.String
}) {}

export class AlreadyRetried extends Schema.TaggedError<AlreadyRetried>()("AlreadyRetried", {
  workId: Schema.String,
  retriedAs: Schema.String
}) {}

export class WorkNotRetryable extends Schema.TaggedError<WorkNotRetryable>()("WorkNotRetryable", {
  workId: Schema.String,
  status: Schema.String
}) {}

/** The node cannot take the work now; the work stays retryable. */
export class BackgroundBusy extends Schema.TaggedError<BackgroundBusy>()("BackgroundBusy", {
  reason: Schema.Literal("conversation-busy", "shutting-down")
}) {}

/** Cancel of work that is not running. */
export class WorkNotRunning extends Schema.TaggedError<WorkNotRunning>()("WorkNotRunning", {
  workId: Schema.String,
  status: Schema.String
}) {}

export type WorkError = WorkNotFound | AlreadyRetried | WorkNotRetryable | BackgroundBusy | WorkNotRunning

export type InboxError =
  | UnknownNoticeAction
  | SurfaceOnlyAction
  | NoticeNotFound
  | ActionNotOffered
  | ActionUnavailable
  | ActionInProgress
  | UndoExpired
  | SnoozeInvalid
  | NotAnUpdate
  | SkippedVersionNotFound
  | WorkError
