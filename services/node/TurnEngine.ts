/**
 * The turn engine: one running turn per conversation, the messages waiting
 * behind it, and the steering rules of the spec. A turn's events reach every
 * follower as a Stream; a follower that leaves never stops the turn.
 */
import { Context, type Duration, type Effect, type Stream } from "effect"
import type { MessageRequest, MessageResult } from "../../schema/node/Conversation.js"
import type { Caller } from "../../schema/node/Security.js"
import type {
  AlreadyAskedAgain,
  AnswerInvalid,
  ConversationNotFound,
  HostControlAnswered,
  HostControlNotFound,
  LastEventIdInvalid,
  QuestionClosed,
  QuestionNotFound,
  QuestionOpen,
  ReferenceNotAvailable
} from "./ConversationErrors.js"
import type { Route } from "./Steering.js"

export type { Route } from "./Steering.js"

export type TurnEventName =
  | "delta"
  | "reasoning"
  | "tool-start"
  | "tool-end"
  | "host-control"
  | "widget-action-requested"
  | "error"
  | "done"

export interface TurnEvent {
  /** The task whose log holds the event; null for an answer that ran no turn (an app intent), never resumable. */
  readonly taskId: string | null
  readonly seq: number
  readonly event: TurnEventName
  readonly data: unknown
}

export interface Submission {
  readonly conversationId: string
  readonly request: MessageRequest
  readonly caller: Caller
  readonly route: Route
  /** A message the node writes itself (a continuation after an approval), marked so in the timeline. */
  readonly hostWritten?: { readonly kind: string; readonly version: number } | undefined
}

/** A task approval's grant, as the engine continues its task. */
export interface Continuation {
  readonly conversationId: string
  readonly origin: Caller["surface"]
  readonly packageId: string
  readonly tool: string
}

/** What the engine did with a message. */
export type Disposition = "started" | "steered" | "waiting" | "interrupting" | "app-intent" | "replayed"

/** How a follower writes out the events that arrived together. */
export interface EventWriter<O> {
  /** Sent first, before any event: even a stream that waits for its turn to start has it at once. */
  readonly opening?: O | undefined
  readonly write: (events: ReadonlyArray<TurnEvent>) => O
  /**
   * Called when the reader asks for the next piece after taking one (so after it wrote it out), unless that piece
   * ended the stream (it held `done`).
   */
  readonly taken?: (() => void) | undefined
}

/** What the submitter of one message follows. */
export interface Ticket {
  readonly disposition: Disposition
  /** The task that answers it: its own (also while it waits), the running one it was steered into, or none. */
  readonly taskId: string | null
  /** The stored messages of this submission: the user's message, and its reply once the turn has one. */
  readonly messageIds: ReadonlyArray<string>
  /**
   * The events of the turn that answers it (replayed from where it joined, then live), ending with its own `done`.
   * Interrupting the stream only stops the delivery; the turn goes on.
   */
  readonly events: Stream.Stream<TurnEvent>
  /**
   * The same events, each piece that arrived together written out by `writer` as one element (a response's bytes).
   * For a turn that is running this is the follower itself, not a stage piped after `events`: one channel step
   * less per piece and one channel executor less to close when the stream ends.
   */
  readonly written: <O>(writer: EventWriter<O>) => Stream.Stream<O>
  /** The result, once the answering turn has ended. */
  readonly result: Effect.Effect<MessageResult>
}

export interface StopCounts {
  readonly turns: number
  readonly waiting: number
  readonly jobs: number
  readonly commands: number
}

export interface QuestionAnswer {
  readonly text?: string | undefined
  readonly optionIds?: ReadonlyArray<string> | undefined
  readonly confirmed?: boolean | undefined
}

export interface QuestionOutcome {
  readonly questionId: string
  readonly status: "open" | "answered" | "cancelled" | "expired" | "asked-again"
  readonly askedAgainAs?: string
  readonly taskId?: string
}

export class TurnEngine extends Context.Tag("clark/node/TurnEngine")<TurnEngine, {
  /** How long the waiting route waits before answering 202 and leaving the turn in the background. */
  readonly waitBudget: Duration.Duration
  readonly submit: (submission: Submission) => Effect.Effect<Ticket, ConversationNotFound | ReferenceNotAvailable>
  /** Follows a turn again after the event a Last-Event-ID names (`<taskId>:<seq>`); never starts one. */
  readonly resume: (
    conversationId: string,
    lastEventId: string
  ) => Effect.Effect<Ticket, ConversationNotFound | LastEventIdInvalid>
  readonly stop: (
    conversationId: string,
    source: "chat" | "voice" | "api",
    caller: Caller
  ) => Effect.Effect<boolean, ConversationNotFound>
  readonly emergencyStop: (caller: Caller) => Effect.Effect<StopCounts>
  /**
   * Message rule 6 at shutdown: refuses new turns, stops the running ones (their text kept, labelled stopped),
   * cancels every waiting message and ends every follower with its `done`.
   */
  readonly shutdown: Effect.Effect<StopCounts>
  readonly isRunning: (conversationId: string) => Effect.Effect<boolean>
  /**
   * Runs a task again after the person granted its approval: the node writes the user message that starts the
   * run itself (`hostWritten: host-continuation`), under the task's origin. Answers the run's task, or null when
   * the node did not accept it (the conversation is gone, the node is shutting down): then nothing ran.
   */
  readonly continueTask: (continuation: Continuation) => Effect.Effect<string | null>
  readonly answerHostControl: (
    controlId: string,
    ran: boolean,
    say: string,
    caller: Caller
  ) => Effect.Effect<void, HostControlNotFound | HostControlAnswered>
  readonly answerQuestion: (
    conversationId: string,
    questionId: string,
    answer: QuestionAnswer,
    caller: Caller
  ) => Effect.Effect<QuestionOutcome, ConversationNotFound | QuestionNotFound | QuestionClosed | AnswerInvalid | ReferenceNotAvailable>
  readonly cancelQuestion: (
    conversationId: string,
    questionId: string
  ) => Effect.Effect<QuestionOutcome, ConversationNotFound | QuestionNotFound | QuestionClosed>
  readonly askAgain: (
    conversationId: string,
    questionId: string
  ) => Effect.Effect<
    QuestionOutcome,
    ConversationNotFound | QuestionNotFound | QuestionClosed | QuestionOpen | AlreadyAskedAgain
  >
}>() {}
