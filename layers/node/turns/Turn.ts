/**
 * A running turn and its event log. The turn's own fiber is the only writer of
 * its log and reply; followers read the log once, then take live events from
 * the turn's PubSub, so a late joiner misses nothing and sees nothing twice.
 */
import { Channel, Chunk, Deferred, Effect, type Fiber, Option, PubSub, Queue, Scope, Stream } from "effect"
import type { Block, MessageResult, TimelineEntry } from "../../../schema/node/Conversation.js"
import type { Channel as InputChannel, Surface } from "../../../schema/node/Security.js"
import type { Phase, Route } from "../../../services/node/Steering.js"
import type { Submission, TurnEvent, TurnEventName } from "../../../services/node/TurnEngine.js"

export type Status = "complete" | "stopped" | "failed"

export interface Turn {
  readonly taskId: string
  readonly conversationId: string
  readonly origin: Surface
  readonly channel: InputChannel
  readonly route: Route
  readonly userMessageId: string
  readonly assistantMessageId: string
  /** The turn's user message and the messages steered into it, as last written (the `done` timeline). */
  readonly entries: Array<TimelineEntry>
  /** The conversation as its model reads it, when start-up read it already (in the transaction that stored the turn). */
  readonly history: ReadonlyArray<TimelineEntry> | undefined
  /** Live events, for followers that joined before they happened. */
  readonly live: PubSub.PubSub<TurnEvent>
  /** The answer of the turn (the `done` event's data), once it is stored. */
  readonly result: Deferred.Deferred<MessageResult>
  /** Steered messages the model has not read yet. */
  readonly steers: Array<string>
  readonly blocks: Array<Block>
  /** Every event of the turn so far. */
  readonly log: Array<TurnEvent>
  /** How many of `log` are in the store. */
  persisted: number
  /** Whether the store lacks some of its events or reply: the checkpoint writer's to-do mark. */
  dirty: boolean
  /** The reply's end, set when the turn ends; the next checkpoint writes it. */
  final: { readonly status: Status; readonly note: string | null } | undefined
  /** The `done` event, once the checkpoint that wrote the reply's end has stored it. */
  closing: TurnEvent | undefined
  phase: Phase
  seq: number
  stopNote: string | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
}

/** A turn about to run: its user message and reply stored, nothing said yet. */
export const make = (
  submission: Submission,
  taskId: string,
  user: TimelineEntry,
  reply: TimelineEntry,
  history: ReadonlyArray<TimelineEntry> | undefined
): Effect.Effect<Turn> =>
  Effect.gen(function*() {
    return {
      taskId,
      conversationId: submission.conversationId,
      origin: submission.caller.surface,
      channel: submission.caller.channel,
      route: submission.route,
      userMessageId: user.messageId,
      assistantMessageId: reply.messageId,
      entries: [user],
      history,
      live: yield* PubSub.unbounded<TurnEvent>(),
      result: yield* Deferred.make<MessageResult>(),
      steers: [],
      blocks: [],
      log: [],
      persisted: 0,
      dirty: false,
      final: undefined,
      closing: undefined,
      phase: "setup",
      seq: 0,
      stopNote: undefined,
      fiber: undefined
    }
  })

/** Appends an event to the log and hands it to the live followers, synchronously: the hot path of a delta. */
export const publish = (turn: Turn, event: TurnEvent): void => {
  turn.seq = event.seq
  turn.log.push(event)
  turn.live.unsafeOffer(event)
}

export const nextEvent = (turn: Turn, event: TurnEventName, data: unknown): TurnEvent => ({
  taskId: turn.taskId,
  seq: turn.seq + 1,
  event,
  data
})

/**
 * A follower that reads this many events behind is cut off rather than buffered without end; it can resume with
 * Last-Event-ID.
 */
const maxBacklog = 10_000
/** Events taken from the subscription at once: what arrived together leaves together. */
const maxChunk = 256

/**
 * The events of a turn after `afterSeq`, ending with its `done`. It subscribes to the live events before it reads
 * the log, so nothing falls between the two; what is in both is dropped by its seq.
 *
 * One channel, written out: subscribe, then a loop of pulls, each writing the events that arrived together. Stream
 * combinators here (unwrapScoped, concat, filter, takeUntil) each cost a channel step per event, and a flattening
 * step more than one; at 100 streams they doubled the node's CPU per delta against the callbacks they replaced.
 */
export const follow = (turn: Turn, afterSeq: number): Stream.Stream<TurnEvent> => {
  const subscribed = Effect.flatMap(Scope.make(), (scope) =>
    Effect.map(Scope.extend(PubSub.subscribe(turn.live), scope), (live) => ({ scope, live })))
  return Stream.fromChannel(Channel.flatMap(Channel.fromEffect(subscribed), ({ live, scope }) => {
    let seen = afterSeq
    let ended = false
    const fresh = (events: Iterable<TurnEvent>) => {
      const out: Array<TurnEvent> = []
      for (const event of events) {
        if (event.seq <= seen) continue
        out.push(event)
        seen = event.seq
        if (event.event === "done") {
          ended = true
          break
        }
      }
      return out
    }
    const live$ = (): Channel.Channel<Chunk.Chunk<TurnEvent>> =>
      ended || Option.getOrElse(live.unsafeSize(), () => 0) > maxBacklog
        ? Channel.void
        : Channel.flatMap(Channel.fromEffect(Queue.takeBetween(live, 1, maxChunk)), (chunk) => {
          const events = fresh(chunk)
          return events.length === 0 ? live$() : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(events)), live$())
        })
    const logged = Channel.suspend(() => {
      const events = fresh(turn.log)
      return events.length === 0 ? Channel.void : Channel.write(Chunk.unsafeFromArray(events))
    })
    return Channel.ensuringWith(Channel.zipRight(logged, Channel.suspend(live$)), (exit) => Scope.close(scope, exit))
  }))
}

export const textOf = (blocks: ReadonlyArray<Block>) =>
  blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

export const appendText = (blocks: Array<Block>, type: "text" | "reasoning", text: string) => {
  const last = blocks.at(-1)
  if (last !== undefined && last.type === type) blocks[blocks.length - 1] = { type, text: last.text + text }
  else blocks.push({ type, text })
}

export const replaceBlock = (blocks: Array<Block>, matches: (block: Block) => boolean, next: Block) => {
  const index = blocks.findIndex(matches)
  if (index >= 0) blocks[index] = next
}
