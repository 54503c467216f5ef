/** Conversations, their timeline entries, turn events, questions, host-controls and notices. */
import { Context, type Effect, type Option } from "effect"
import type { Block, ConversationSummary, MessageStatus, TimelineEntry } from "../../schema/node/Conversation.js"
import type { Channel, Surface } from "../../schema/node/Security.js"

export interface Conversation {
  readonly id: string
  readonly homeNodeId: string
  readonly title: string | null
}

export interface NewMessage {
  readonly conversationId: string
  readonly role: "user" | "assistant"
  readonly origin: Surface | null
  readonly channel: Channel | null
  readonly status: MessageStatus
  readonly taskId: string | null
  readonly blocks: ReadonlyArray<Block>
  readonly note?: string | null
  readonly hostWritten?: { readonly kind: string; readonly version: number } | undefined
}

export interface MessagePatch {
  readonly status?: MessageStatus
  readonly note?: string | null
  readonly blocks?: ReadonlyArray<Block>
  readonly taskId?: string | null
}

/** What a running turn writes at a checkpoint: its new events, and its reply as it stands. */
export interface Checkpoint {
  readonly conversationId: string
  readonly taskId: string
  readonly events: ReadonlyArray<StoredEvent>
  readonly reply: { readonly messageId: string; readonly patch: MessagePatch }
  /** An event that follows from the reply as saved (a turn's `done`), stored in the same transaction. */
  readonly closing?: ((saved: SavedEntry) => StoredEvent) | undefined
}

/** A message as a write left it, and the conversation's revision after that write. */
export interface SavedEntry {
  readonly entry: TimelineEntry
  readonly last: number
}

export interface StoredEvent {
  readonly seq: number
  readonly event: string
  readonly data: unknown
}

export interface QuestionPrompt {
  readonly question: string
  readonly options: ReadonlyArray<{ readonly id: string; readonly label: string }>
  readonly allowText: boolean
}

export type QuestionStatus = "open" | "answered" | "cancelled" | "expired" | "asked-again"

export interface Question {
  readonly id: string
  readonly conversationId: string
  readonly messageId: string
  readonly taskId: string
  readonly prompt: QuestionPrompt
  readonly status: QuestionStatus
  readonly expiresAt: string
  readonly askedAgainAs: string | null
}

export interface HostControl {
  readonly id: string
  readonly conversationId: string
  readonly taskId: string
  readonly action: Record<string, unknown>
  readonly status: "waiting" | "ran" | "not-run" | "unconfirmed"
}

export class ConversationStore extends Context.Tag("clark/node/ConversationStore")<ConversationStore, {
  readonly create: (homeNodeId: string, title: string | null) => Effect.Effect<Conversation>
  readonly get: (id: string) => Effect.Effect<Option.Option<Conversation>>
  readonly list: Effect.Effect<ReadonlyArray<Omit<ConversationSummary, "running">>>
  readonly insertMessage: (message: NewMessage) => Effect.Effect<TimelineEntry>
  /** Inserts messages of one conversation in one transaction, in order; none when the conversation does not exist. */
  readonly insertMessages: (
    conversationId: string,
    messages: ReadonlyArray<Omit<NewMessage, "conversationId">>
  ) => Effect.Effect<ReadonlyArray<TimelineEntry>>
  /** Changes a message under a new revision and returns it as changed. */
  readonly updateMessage: (conversationId: string, messageId: string, patch: MessagePatch) => Effect.Effect<SavedEntry>
  readonly message: (messageId: string) => Effect.Effect<Option.Option<TimelineEntry>>
  /** Entries inserted or changed after revision `after`, in timeline order, and the newest revision. */
  readonly timeline: (
    conversationId: string,
    after: number
  ) => Effect.Effect<{ readonly entries: ReadonlyArray<TimelineEntry>; readonly last: number }>
  /** Entries of one task (or named messages), in timeline order, and the newest revision. */
  readonly taskEntries: (
    conversationId: string,
    taskId: string | null,
    messageIds: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly entries: ReadonlyArray<TimelineEntry>; readonly last: number }>
  /** Stores the checkpoints of any number of turns in one transaction. */
  readonly checkpoint: (checkpoints: ReadonlyArray<Checkpoint>) => Effect.Effect<void>
  readonly events: (taskId: string, afterSeq: number) => Effect.Effect<ReadonlyArray<StoredEvent>>
  readonly clientRequest: (
    conversationId: string,
    clientRequestId: string
  ) => Effect.Effect<Option.Option<{ readonly messageId: string; readonly taskId: string | null }>>
  readonly saveClientRequest: (
    conversationId: string,
    clientRequestId: string,
    messageId: string,
    taskId: string | null
  ) => Effect.Effect<void>
  readonly insertQuestion: (question: Question) => Effect.Effect<void>
  readonly question: (id: string) => Effect.Effect<Option.Option<Question>>
  /**
   * Moves a question to `patch.status` only if it is in one of `from`, in one conditional write; false when it was
   * not (another call won, or it was never there). Concurrent transitions of one question: exactly one wins.
   */
  readonly transitionQuestion: (
    id: string,
    from: ReadonlyArray<QuestionStatus>,
    patch: { readonly status: QuestionStatus; readonly askedAgainAs?: string }
  ) => Effect.Effect<boolean>
  readonly openQuestions: Effect.Effect<ReadonlyArray<Question>>
  readonly insertHostControl: (control: HostControl) => Effect.Effect<void>
  readonly hostControl: (id: string) => Effect.Effect<Option.Option<HostControl & { readonly answered: boolean }>>
  /** Records the app's answer once; false when it was already answered. */
  readonly answerHostControl: (id: string, ran: boolean, say: string) => Effect.Effect<boolean>
  readonly settleHostControl: (id: string, status: "unconfirmed") => Effect.Effect<void>
  readonly insertNotice: (notice: {
    readonly kind: string
    readonly conversationId: string | null
    readonly subjectId: string | null
    readonly data: Record<string, unknown>
  }) => Effect.Effect<string>
  readonly notices: Effect.Effect<
    ReadonlyArray<{ readonly id: string; readonly kind: string; readonly subjectId: string | null; readonly state: string }>
  >
  /** Messages left `writing` or `waiting`, e.g. by a crash, with their conversation. */
  readonly unfinished: Effect.Effect<ReadonlyArray<TimelineEntry & { readonly conversationId: string }>>
}>() {}
