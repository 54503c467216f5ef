/**
 * The inbox (spec, "Notice (inbox item)" and "Inbox, notices, work, effects"): the notices with the actions
 * that fit them now, the approvals waiting for the person, and the versions they skipped; one route for every
 * notice action. The rules are pure functions in ./Notices.ts; background work's retry in ./BackgroundWork.ts.
 */
import { Context, type Effect } from "effect"
import type {
  Inbox as InboxView,
  NoticeActionApprovalRequired,
  NoticeActionDone,
  SkippedVersion,
  SkipVersionResult
} from "../../schema/node/Inbox.js"
import type { Caller } from "../../schema/node/Security.js"
import type { PersonOnlyRefused } from "./AccessErrors.js"
import type { AlreadyAskedAgain, ConversationNotFound, QuestionClosed, QuestionNotFound, QuestionOpen } from "./ConversationErrors.js"
import type { InboxError, NoticeNotFound, NotAnUpdate, SkippedVersionNotFound } from "./InboxErrors.js"
import type { InstallError } from "./PackageErrors.js"

/** A notice another part of the node writes (jobs write theirs here, issue 15). */
export interface NewNotice {
  readonly kind: string
  readonly conversationId: string | null
  /** What the notice is about (a question, an effect, a task, a package version); one notice per kind and subject. */
  readonly subjectId: string
  readonly data: Readonly<Record<string, unknown>>
  /** What sends notices like it, silenced together by suppress (`package:<name>`, `pi:engine`, `job:<pkg>/<cap>`). */
  readonly source?: string | null | undefined
}

export interface InboxQuery {
  readonly limit: number
  readonly before?: string | undefined
}

export type ActionOutcome =
  | { readonly _tag: "Done"; readonly body: typeof NoticeActionDone.Type }
  | { readonly _tag: "ApprovalRequired"; readonly body: typeof NoticeActionApprovalRequired.Type }

/** What an action can be refused with: the table's own refusals, and those of what it does, passed on unchanged. */
export type ActionError =
  | InboxError
  | PersonOnlyRefused
  | InstallError
  | ConversationNotFound
  | QuestionNotFound
  | QuestionClosed
  | QuestionOpen
  | AlreadyAskedAgain

export class Inbox extends Context.Tag("clark/node/Inbox")<Inbox, {
  readonly read: (query: InboxQuery) => Effect.Effect<InboxView>
  /** `rawAction` is the name exactly as written in the request's path, never decoded. */
  readonly act: (
    noticeId: string,
    rawAction: string,
    payload: { readonly until?: string | undefined },
    caller: Caller
  ) => Effect.Effect<ActionOutcome, ActionError>
  readonly skipVersion: (
    noticeId: string,
    skip: boolean,
    caller: Caller
  ) => Effect.Effect<typeof SkipVersionResult.Type, NoticeNotFound | NotAnUpdate>
  readonly removeSkipped: (
    skipped: Omit<typeof SkippedVersion.Type, "skippedAt">,
    caller: Caller
  ) => Effect.Effect<{ readonly removed: boolean }, SkippedVersionNotFound>
  /** Writes a notice unless its source is suppressed; the same kind and subject twice is one notice. */
  readonly notify: (notice: NewNotice) => Effect.Effect<string | null>
}>() {}
