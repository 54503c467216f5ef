/**
 * What can go wrong with conversations, turns, questions and host-controls, as
 * the turn engine sees it. None of these knows an HTTP status: the node's one
 * mapping module (src/node/http/Errors.ts) turns each into its wire code.
 */
import { Schema } from "effect"
import { Ref } from "../../schema/node/Conversation.js"

export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  conversationId: Schema.String
}) {}

/** A Last-Event-ID or resume named a turn this conversation never had. */
export class TurnNotFound extends Schema.TaggedError<TurnNotFound>()("TurnNotFound", {
  conversationId: Schema.String,
  taskId: Schema.String
}) {}

/** A Last-Event-ID that is not `<taskId>:<seq>` as the node writes it. */
export class LastEventIdInvalid extends Schema.TaggedError<LastEventIdInvalid>()("LastEventIdInvalid", {
  /** A short prefix of what was sent, never the whole header. */
  given: Schema.String
}) {}

/** Message rule 7: a reference that no longer resolves refuses the whole message. */
export class ReferenceNotAvailable extends Schema.TaggedError<ReferenceNotAvailable>()("ReferenceNotAvailable", {
  reference: Ref
}) {}

export class QuestionNotFound extends Schema.TaggedError<QuestionNotFound>()("QuestionNotFound", {
  conversationId: Schema.String,
  questionId: Schema.String
}) {}

/** The question was answered, cancelled or expired before this call. */
export class QuestionClosed extends Schema.TaggedError<QuestionClosed>()("QuestionClosed", {
  questionId: Schema.String,
  status: Schema.Literal("answered", "cancelled", "expired", "asked-again")
}) {}

/** Ask-again of a question that is still waiting for its answer. */
export class QuestionOpen extends Schema.TaggedError<QuestionOpen>()("QuestionOpen", {
  questionId: Schema.String
}) {}

export class AlreadyAskedAgain extends Schema.TaggedError<AlreadyAskedAgain>()("AlreadyAskedAgain", {
  questionId: Schema.String,
  askedAgainAs: Schema.String
}) {}

/** An answer the question cannot take (text where only options are offered, an unknown option, nothing at all). */
export class AnswerInvalid extends Schema.TaggedError<AnswerInvalid>()("AnswerInvalid", {
  questionId: Schema.String,
  reason: Schema.Literal("text-not-allowed", "unknown-option", "empty")
}) {}

export class HostControlNotFound extends Schema.TaggedError<HostControlNotFound>()("HostControlNotFound", {
  controlId: Schema.String
}) {}

/** Each controlId is answered once. */
export class HostControlAnswered extends Schema.TaggedError<HostControlAnswered>()("HostControlAnswered", {
  controlId: Schema.String
}) {}

export type ConversationError =
  | ConversationNotFound
  | TurnNotFound
  | LastEventIdInvalid
  | ReferenceNotAvailable
  | QuestionNotFound
  | QuestionClosed
  | QuestionOpen
  | AlreadyAskedAgain
  | AnswerInvalid
  | HostControlNotFound
  | HostControlAnswered
