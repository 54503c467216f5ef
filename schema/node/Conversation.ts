/** Conversations, messages, the timeline and questions. */
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { Channel, Surface } from "./Security.js"

export const ConversationId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))
export const ConversationPath = Schema.Struct({ id: ConversationId })

export const CreateConversation = Schema.Struct({
  title: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

export const CreatedConversation = Schema.Struct({ conversationId: Schema.String, homeNodeId: Schema.String })

export const ConversationSummary = Schema.Struct({
  conversationId: Schema.String,
  homeNodeId: Schema.String,
  title: Schema.NullOr(Schema.String),
  createdAt: DateTimeString,
  updatedAt: DateTimeString,
  running: Schema.Boolean
}).annotations({ identifier: "ConversationSummary" })
export type ConversationSummary = typeof ConversationSummary.Type

export const ConversationList = Schema.Struct({ conversations: Schema.Array(ConversationSummary) })

/** A pointer obtained from GET /composer/suggestions and sent back unchanged; never a permission. */
export const RefKind = Schema.Literal("skill", "project", "file", "folder", "mcp-service", "conversation", "work", "notice")
export type RefKind = typeof RefKind.Type

export const Ref = Schema.Struct(
  { kind: RefKind, id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "Ref" })
export type Ref = typeof Ref.Type

export const References = Schema.Struct({
  version: Schema.Literal(1),
  items: Schema.Array(Ref).pipe(Schema.maxItems(8))
})

export const MessageRequest = Schema.Struct({
  text: Schema.String.pipe(Schema.maxLength(100_000)),
  attachmentIds: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(32))),
  references: Schema.optional(References),
  /** A client's own id for this submission: a retry with the same id never starts a second turn. */
  clientRequestId: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
}).annotations({ identifier: "MessageRequest" })
export type MessageRequest = typeof MessageRequest.Type

export const HostWritten = Schema.Struct({ kind: Schema.String, version: Schema.Int })

export const Block = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("reasoning"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("tool"),
    toolCallId: Schema.String,
    name: Schema.String,
    input: Schema.Unknown,
    output: Schema.optional(Schema.Unknown),
    status: Schema.Literal("running", "done", "failed"),
    // A package tool's call (docs/decisions.md, "Package tools in turns"): which package, its risk class, a
    // short line for people, and what became of it when it did not simply run.
    packageId: Schema.optional(Schema.String),
    risk: Schema.optional(Schema.String),
    summary: Schema.optional(Schema.String),
    outcome: Schema.optional(Schema.Literal("unknown-effect", "approval-required", "denied", "not-sent")),
    code: Schema.optional(Schema.String),
    effectId: Schema.optional(Schema.String),
    approvalId: Schema.optional(Schema.String)
  }),
  Schema.Struct({ type: Schema.Literal("references"), version: Schema.Literal(1), items: Schema.Array(Ref) }),
  Schema.Struct({
    type: Schema.Literal("question"),
    questionId: Schema.String,
    status: Schema.Literal("open", "answered", "cancelled", "expired", "asked-again")
  }),
  Schema.Struct({
    type: Schema.Literal("host-control"),
    controlId: Schema.String,
    action: Schema.String,
    status: Schema.Literal("waiting", "ran", "not-run", "unconfirmed")
  }),
  Schema.Struct({ type: Schema.Literal("error"), code: Schema.String, message: Schema.String })
).annotations({ identifier: "Block" })
export type Block = typeof Block.Type

export const MessageStatus = Schema.Literal("writing", "complete", "stopped", "failed", "cancelled", "waiting")
export type MessageStatus = typeof MessageStatus.Type

export const TimelineEntry = Schema.Struct({
  seq: Schema.Int,
  messageId: Schema.String,
  role: Schema.Literal("user", "assistant"),
  origin: Schema.NullOr(Surface),
  channel: Schema.NullOr(Channel),
  status: MessageStatus,
  /** Why the reply ended as it did, for stopped, failed and cancelled messages. */
  note: Schema.NullOr(Schema.String),
  hostWritten: Schema.optional(HostWritten),
  taskId: Schema.NullOr(Schema.String),
  blocks: Schema.Array(Block),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "TimelineEntry" })
export type TimelineEntry = typeof TimelineEntry.Type

export const Timeline = Schema.Struct({
  conversationId: Schema.String,
  entries: Schema.Array(TimelineEntry),
  /** The sequence number to pass as `after` next time. */
  last: Schema.Int
}).annotations({ identifier: "Timeline" })
export type Timeline = typeof Timeline.Type

export const TimelineParams = Schema.Struct({
  after: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative()))
})

export const Resolution = Schema.Literal("answered", "steered", "stopped", "failed", "cancelled", "background", "app-intent")
export type Resolution = typeof Resolution.Type

export const AppIntent = Schema.Struct(
  { kind: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const MessageResult = Schema.Struct({
  resolution: Resolution,
  taskId: Schema.NullOr(Schema.String),
  messageIds: Schema.Array(Schema.String),
  timeline: Timeline,
  appIntent: Schema.optional(AppIntent)
}).annotations({ identifier: "MessageResult" })
export type MessageResult = typeof MessageResult.Type

export const StopRequest = Schema.Struct({ source: Schema.optional(Schema.Literal("chat", "voice", "api")) })
export const StopResult = Schema.Struct({ stopped: Schema.Boolean })

export const EmergencyStopResult = Schema.Struct({
  stopped: Schema.Struct({
    turns: Schema.Int,
    waiting: Schema.Int,
    jobs: Schema.Int,
    commands: Schema.Int
  })
})

export const QuestionPath = Schema.Struct({ id: ConversationId, questionId: Schema.String.pipe(Schema.maxLength(64)) })

export const AnswerRequest = Schema.Struct({
  text: Schema.optional(Schema.String.pipe(Schema.maxLength(10_000))),
  optionIds: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(50))),
  confirmed: Schema.optional(Schema.Boolean)
})

export const QuestionState = Schema.Struct({
  questionId: Schema.String,
  status: Schema.Literal("open", "answered", "cancelled", "expired", "asked-again"),
  /** The new question of an ask-again; the old one of its predecessor. */
  askedAgainAs: Schema.optional(Schema.String),
  taskId: Schema.optional(Schema.String)
}).annotations({ identifier: "QuestionState" })
