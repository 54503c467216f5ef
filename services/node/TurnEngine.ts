/**
 * The turn supervisor: one running turn per conversation, the messages waiting
 * behind it, and the steering rules of the spec. Events of a turn go to every
 * follower; a follower that leaves never stops the turn.
 */
import { Context, type Duration, type Effect } from "effect"
import type { MessageRequest, MessageResult } from "../../schema/node/Conversation.js"
import type { NodeError } from "../../schema/node/Errors.js"
import type { Caller } from "../../schema/node/Security.js"

export type TurnEventName = "delta" | "reasoning" | "tool-start" | "tool-end" | "host-control" | "error" | "done"

export interface TurnEvent {
  readonly taskId: string
  readonly seq: number
  readonly event: TurnEventName
  readonly data: unknown
}

/** How a message arrived: rule 4 of the spec treats the waiting route apart from every other way. */
export type Route = "wait" | "stream" | "answer"

export interface Submission {
  readonly conversationId: string
  readonly request: MessageRequest
  readonly caller: Caller
  readonly route: Route
}

/** What the supervisor did with a message. */
export type Disposition = "started" | "steered" | "waiting" | "interrupting" | "app-intent" | "replayed"

/**
 * Receives a turn's events as they happen, on the turn's own fiber: it runs synchronously and must only hand the
 * event on (buffer or write it), never block. A callback rather than a Stream per follower: see
 * docs/decisions.md, "The node's hot path".
 */
export type EventSink = (event: TurnEvent) => void

/** What the submitter of one message follows. */
export interface Ticket {
  readonly disposition: Disposition
  /** The task of the turn answering it, when known at submission. */
  readonly taskId: string | null
  /**
   * Hands `sink` the events of the turn that answers it (replayed from where it joined, then live), ending with its
   * own `done`, and ends after that. Interrupting it only stops the delivery; the turn goes on.
   */
  readonly follow: (sink: EventSink) => Effect.Effect<void>
  /** The result, once the answering turn has ended. */
  readonly result: Effect.Effect<MessageResult>
}

export interface StopCounts {
  readonly turns: number
  readonly waiting: number
  readonly jobs: number
  readonly commands: number
}

export class TurnEngine extends Context.Tag("clark/node/TurnEngine")<TurnEngine, {
  /** How long the waiting route waits before answering 202 and leaving the turn in the background. */
  readonly waitBudget: Duration.Duration
  readonly submit: (submission: Submission) => Effect.Effect<Ticket, NodeError>
  /** Follows a turn again from after event `afterSeq` (Last-Event-ID). */
  readonly resume: (conversationId: string, taskId: string, afterSeq: number) => Effect.Effect<Ticket, NodeError>
  readonly stop: (conversationId: string, source: "chat" | "voice" | "api", caller: Caller) => Effect.Effect<boolean, NodeError>
  readonly emergencyStop: (caller: Caller) => Effect.Effect<StopCounts>
  readonly isRunning: (conversationId: string) => Effect.Effect<boolean>
  readonly answerHostControl: (controlId: string, ran: boolean, say: string, caller: Caller) => Effect.Effect<void, NodeError>
  readonly answerQuestion: (
    conversationId: string,
    questionId: string,
    answer: QuestionAnswer,
    caller: Caller
  ) => Effect.Effect<QuestionOutcome, NodeError>
  readonly cancelQuestion: (conversationId: string, questionId: string) => Effect.Effect<QuestionOutcome, NodeError>
  readonly askAgain: (conversationId: string, questionId: string) => Effect.Effect<QuestionOutcome, NodeError>
}>() {}

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
