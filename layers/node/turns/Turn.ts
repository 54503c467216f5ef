/**
 * A running turn and its event log. The turn's own fiber is the only writer of
 * its log and reply; followers read the log once, then take live events from
 * their mailbox, so a late joiner misses nothing and sees nothing twice.
 */
import { Channel, Chunk, Effect, type Fiber, Stream } from "effect"
import type { Block, MessageResult, TimelineEntry } from "../../../schema/node/Conversation.js"
import { OneShot } from "../../../services/common/OneShot.js"
import type { Channel as InputChannel, Surface } from "../../../schema/node/Security.js"
import type { Phase, Route } from "../../../services/node/Steering.js"
import type { EventWriter, Submission, TurnEvent, TurnEventName } from "../../../services/node/TurnEngine.js"

export type Status = "complete" | "stopped" | "failed"

/**
 * One follower's live events: what was published since it last took, and its wake-up while it waits. A plain
 * array and callback rather than a PubSub subscription: a turn's start made a PubSub, a subscription in a scope
 * of its own and a Deferred for each wait, a good part of what a start costs before its first event.
 */
interface Mailbox {
  readonly events: Array<TurnEvent>
  wake: (() => void) | undefined
  /** More than `maxBacklog` events waited unread: the follower is cut off (it can resume with Last-Event-ID). */
  overflowed: boolean
}

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
  /** The followers' mailboxes: live events, for followers that joined before they happened. */
  readonly followers: Set<Mailbox>
  /**
   * The answer of the turn (the `done` event's data), once it is stored. A OneShot, not a Deferred: one per start
   * (services/common/OneShot.ts says why).
   */
  readonly result: OneShot<MessageResult, never>
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

/**
 * A turn about to run: its user message and reply stored, nothing said yet. A plain function (the engine calls it in
 * the synchronous step that forks the turn): the generator it was ran a `Deferred.make` through four Effect steps per
 * start for an object that needs none.
 */
export const make = (
  submission: Submission,
  taskId: string,
  user: TimelineEntry,
  reply: TimelineEntry,
  history: ReadonlyArray<TimelineEntry> | undefined
): Turn => ({
  taskId,
  conversationId: submission.conversationId,
  origin: submission.caller.surface,
  channel: submission.caller.channel,
  route: submission.route,
  userMessageId: user.messageId,
  assistantMessageId: reply.messageId,
  entries: [user],
  history,
  followers: new Set(),
  result: new OneShot<MessageResult, never>(),
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
})

/** Appends an event to the log and hands it to the live followers, synchronously: the hot path of a delta. */
export const publish = (turn: Turn, event: TurnEvent): void => {
  turn.seq = event.seq
  turn.log.push(event)
  for (const box of turn.followers) {
    if (box.events.length >= maxBacklog) box.overflowed = true
    else box.events.push(event)
    const wake = box.wake
    if (wake !== undefined) {
      box.wake = undefined
      wake()
    }
  }
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
/** Events taken from the mailbox at once: what arrived together leaves together. */
const maxChunk = 256

/**
 * The events of a turn after `afterSeq`, ending with its `done`. Its mailbox is in place before it reads the log
 * (both synchronous, in one step), so nothing falls between the two; what is in both is dropped by its seq.
 */
export const follow = (turn: Turn, afterSeq: number): Stream.Stream<TurnEvent> =>
  Stream.fromChannel(following(turn, afterSeq, Chunk.unsafeFromArray, undefined, undefined))

/**
 * `follow`, each piece of events that arrived together written out by `writer` in the same channel step: a response
 * that wrote them with a stage of its own piped after `follow` paid a channel executor more per response, a step
 * more per piece, and that executor's close when the stream ended.
 */
export const followWritten = <O>(turn: Turn, afterSeq: number, writer: EventWriter<O>): Stream.Stream<O> =>
  Stream.fromChannel(following(turn, afterSeq, (events) => Chunk.of(writer.write(events)), writer.taken, writer.opening))

/**
 * One channel, written out: register, then a loop that writes the events that arrived together and otherwise
 * waits for the next publish. Stream combinators here (unwrapScoped, concat, filter, takeUntil) each cost a
 * channel step per event, and a flattening step more than one; at 100 streams they doubled the node's CPU per
 * delta against the callbacks they replaced. The mailbox leaves the turn when the channel ends or is
 * interrupted (the client left). `taken` runs when the reader asks for more after a piece that did not end it;
 * `opening` is written first (in one channel step with the log, where a stage of its own concatenated before the
 * follower cost a step per piece and its share of the stream's end).
 */
const following = <O>(
  turn: Turn,
  afterSeq: number,
  out: (events: Array<TurnEvent>) => Chunk.Chunk<O>,
  taken: (() => void) | undefined,
  opening: O | undefined
): Channel.Channel<Chunk.Chunk<O>> =>
  Channel.suspend(() => {
    const box: Mailbox = { events: [], wake: undefined, overflowed: false }
    turn.followers.add(box)
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
    // Checked again when it registers: the fiber may have yielded between the loop's look at the mailbox and
    // this step, and an event published meanwhile found no wake-up to call.
    const published = Effect.async<void>((resume) => {
      if (box.events.length > 0 || box.overflowed) return resume(Effect.void)
      box.wake = () => resume(Effect.void)
      return Effect.sync(() => {
        box.wake = undefined
      })
    })
    const next = taken === undefined ? live$ : () => {
      if (!ended) taken()
      return live$()
    }
    function live$(): Channel.Channel<Chunk.Chunk<O>> {
      if (ended || box.overflowed) return Channel.void
      if (box.events.length === 0) return Channel.flatMap(Channel.fromEffect(published), live$)
      const events = fresh(box.events.length <= maxChunk ? box.events.splice(0) : box.events.splice(0, maxChunk))
      return events.length === 0 ? live$() : Channel.zipRight(Channel.write(out(events)), Channel.suspend(next))
    }
    const events = fresh(turn.log)
    // The opening and what the log holds already leave as one piece.
    const first = events.length === 0 ? undefined : out(events)
    const logged = opening === undefined
      ? first === undefined ? Channel.void : Channel.write(first)
      : Channel.write(first === undefined ? Chunk.of(opening) : Chunk.prepend(first, opening))
    return Channel.ensuring(
      Channel.zipRight(logged, Channel.suspend(events.length === 0 ? live$ : next)),
      Effect.sync(() => void turn.followers.delete(box))
    )
  })

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
