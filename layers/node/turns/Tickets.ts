/** What a submitter follows, for each way a message can go (docs: message rules 1-6). */
import { Channel, Chunk, Effect, Option, Stream } from "effect"
import type { MessageResult, Resolution } from "../../../schema/node/Conversation.js"
import type { OneShot } from "../../../services/common/OneShot.js"
import type { EventWriter, Submission, Ticket, TurnEvent } from "../../../services/node/TurnEngine.js"
import type { ConversationStore } from "../../../services/node/ConversationStore.js"
import { follow, followWritten, type Turn } from "./Turn.js"

/** How a waiting message ended up: its own turn, or cancelled before it started (with its stored `done`). */
export type Started = { readonly _tag: "Turn"; readonly turn: Turn } | { readonly _tag: "Cancelled"; readonly done: TurnEvent }

export interface Waiting {
  readonly userMessageId: string
  /** Taken when the message arrives, so its submitter can name the task before it runs. */
  readonly taskId: string
  readonly submission: Submission
  /** How it ended up, once it did; a OneShot, not a Deferred (services/common/OneShot.ts says why). */
  readonly started: OneShot<Started, never>
}

/**
 * `events` written out by `writer`, as a stage after them: for the streams that are not a running turn's follower
 * (a replay from the store, an answer that ran no turn), which a response reads once.
 */
export const writtenBy = <O>(events: Stream.Stream<TurnEvent>, writer: EventWriter<O>): Stream.Stream<O> => {
  const loop: Channel.Channel<Chunk.Chunk<O>, Chunk.Chunk<TurnEvent>, never, never, unknown, unknown> = Channel.readWithCause({
    onInput: (events: Chunk.Chunk<TurnEvent>) =>
      Channel.zipRight(
        Channel.write(Chunk.of(writer.write(Chunk.toReadonlyArray(events)))),
        writer.taken === undefined || (events.length > 0 && Chunk.unsafeLast(events).event === "done")
          ? loop
          : Channel.suspend(() => {
            writer.taken!()
            return loop
          })
      ),
    onFailure: Channel.failCause,
    onDone: () => Channel.void
  })
  return Stream.pipeThroughChannel(events, writer.opening === undefined ? loop : Channel.zipRight(Channel.write(Chunk.of(writer.opening)), loop))
}

/** A running turn followed after `afterSeq`. */
const following = (turn: Turn, afterSeq: number) => ({
  events: follow(turn, afterSeq),
  written: <O>(writer: EventWriter<O>) => followWritten(turn, afterSeq, writer)
})

/** The submitter's own turn. */
export const own = (turn: Turn): Ticket => ({
  disposition: "started",
  taskId: turn.taskId,
  messageIds: [turn.userMessageId, turn.assistantMessageId],
  // Listed, not `...following(turn, 0)` before `result`: a spread followed by a property makes a hidden class per
  // object on this V8, one per start (docs/decisions.md, "Widget presses: hidden classes made per press").
  events: follow(turn, 0),
  written: (writer) => followWritten(turn, 0, writer),
  result: turn.result.wait()
})

/** A message steered into a running turn follows the rest of it; its `done` carries the steered result. */
export const steered = (turn: Turn): Ticket => {
  const from = turn.seq
  return {
    disposition: "steered",
    taskId: turn.taskId,
    messageIds: [],
    events: follow(turn, from).pipe(Stream.map(steeredEvent)),
    written: (writer) => followWritten(turn, from, { ...writer, write: (events) => writer.write(events.map(steeredEvent)) }),
    result: Effect.map(turn.result.wait(), steeredResult)
  }
}

const steeredResult = (answer: MessageResult): MessageResult => ({ ...answer, resolution: "steered", messageIds: [] })
const steeredEvent = (event: TurnEvent): TurnEvent =>
  event.event === "done" ? { ...event, data: steeredResult(event.data as MessageResult) } : event

export const waiting = (entry: Waiting, disposition: "waiting" | "interrupting"): Ticket => {
  const outcome = entry.started.wait()
  return {
    disposition,
    taskId: entry.taskId,
    messageIds: [entry.userMessageId],
    events: Stream.unwrap(Effect.map(outcome, (started) =>
      started._tag === "Turn" ? follow(started.turn, 0) : Stream.make(started.done))),
    // The opening goes out before the message has started (its response's head leaves at once).
    written: (writer) =>
      Stream.concat(
        writer.opening === undefined ? Stream.empty : Stream.make(writer.opening),
        Stream.unwrap(Effect.map(outcome, (started) =>
          started._tag === "Turn"
            ? followWritten(started.turn, 0, { ...writer, opening: undefined })
            : Stream.make(writer.write([started.done]))))
      ),
    result: Effect.flatMap(outcome, (started) =>
      started._tag === "Turn" ? started.turn.result.wait() : Effect.succeed(started.done.data as MessageResult))
  }
}

/** A result read back from the store: the entries of a task (or of the named messages). */
export const resultOf = (
  store: ConversationStore["Type"],
  conversationId: string,
  taskId: string | null,
  resolution: Resolution,
  messageIds: ReadonlyArray<string>
) =>
  Effect.map(store.taskEntries(conversationId, taskId, messageIds), ({ entries, last }): MessageResult => ({
    resolution,
    taskId,
    messageIds,
    timeline: { conversationId, entries, last }
  }))

/** An answer that ran no turn: its only event is `done`, without an id, since there is nothing to resume. */
export const immediate = (messageIds: ReadonlyArray<string>, result: Effect.Effect<MessageResult>): Ticket => {
  const events = Stream.fromEffect(Effect.map(result, (data): TurnEvent => ({ taskId: null, seq: 1, event: "done", data })))
  return { disposition: "app-intent", taskId: null, messageIds, events, written: (writer) => writtenBy(events, writer), result }
}

/** The stored events of an ended turn after `afterSeq`. */
export const storedEvents = (store: ConversationStore["Type"], taskId: string, afterSeq: number) =>
  Stream.unwrap(Effect.map(store.events(taskId, afterSeq), (events) =>
    Stream.fromIterable(events.map((e): TurnEvent => ({ taskId, seq: e.seq, event: e.event as TurnEvent["event"], data: e.data })))))

/** A retried submission whose turn has ended: its stored events, and its result as the store has it. */
export const replay = (store: ConversationStore["Type"], conversationId: string, messageId: string, taskId: string | null): Ticket => {
  const result = Effect.gen(function*() {
    const own = yield* store.message(messageId)
    const steeredIn = own._tag === "Some" && own.value.taskId !== null && own.value.taskId !== taskId
    const timeline = (yield* resultOf(store, conversationId, taskId, "answered", [messageId])).timeline
    const reply = timeline.entries.find((e) => e.role === "assistant")
    const resolution: Resolution = steeredIn
      ? "steered"
      : reply?.status === "cancelled" || reply?.status === "stopped" || reply?.status === "failed"
      ? reply.status
      : "answered"
    return { resolution, taskId, messageIds: timeline.entries.map((e) => e.messageId), timeline } satisfies MessageResult
  })
  const events = taskId === null ? Stream.empty : storedEvents(store, taskId, 0)
  return { disposition: "replayed", taskId, messageIds: [messageId], events, written: (writer) => writtenBy(events, writer), result }
}

/** A turn of this conversation that has ended, followed again after `afterSeq`; none when it has no stored end. */
export const ended = (store: ConversationStore["Type"], conversationId: string, taskId: string, afterSeq: number) =>
  Effect.gen(function*() {
    const { entries } = yield* store.taskEntries(conversationId, taskId, [])
    const done = (yield* store.events(taskId, 0)).find((e) => e.event === "done")
    if (entries.length === 0 || done === undefined) return Option.none<Ticket>()
    const result = done.data as MessageResult
    const events = storedEvents(store, taskId, afterSeq)
    return Option.some<Ticket>({
      disposition: "replayed",
      taskId,
      messageIds: result.messageIds,
      events,
      written: (writer) => writtenBy(events, writer),
      result: Effect.succeed(result)
    })
  })

/** `<taskId>:<seq>` as the node writes it in SSE ids. */
export const parseLastEventId = (value: string): { readonly taskId: string; readonly seq: number } | undefined => {
  const match = /^(task_[A-Za-z0-9_-]{1,64}):(\d{1,9})$/.exec(value)
  return match === null ? undefined : { taskId: match[1]!, seq: Number(match[2]) }
}

/** A retry with a known clientRequestId follows or replays the original submission; it never submits again. */
export const retried = (
  store: ConversationStore["Type"],
  conversationId: string,
  running: Turn | undefined,
  queue: ReadonlyArray<Waiting>,
  seen: { readonly messageId: string; readonly taskId: string | null }
): Ticket => {
  if (running !== undefined && running.taskId === seen.taskId) {
    return running.userMessageId === seen.messageId ? own(running) : steered(running)
  }
  const queued = queue.find((w) => w.userMessageId === seen.messageId)
  if (queued !== undefined) return waiting(queued, "waiting")
  return replay(store, conversationId, seen.messageId, seen.taskId)
}

/**
 * The events after `afterSeq` of the task a `Last-Event-ID` names: its turn still running, its message still
 * waiting, or its stored events once it ended; none when the conversation holds no such task.
 */
export const resumed = (
  store: ConversationStore["Type"],
  conversationId: string,
  running: Turn | undefined,
  waitingHere: ReadonlyArray<Waiting>,
  taskId: string,
  afterSeq: number
): Effect.Effect<Option.Option<Ticket>> => {
  if (running?.taskId === taskId) {
    return Effect.succeed(Option.some({ ...own(running), disposition: "replayed", ...following(running, afterSeq) }))
  }
  const queued = waitingHere.find((w) => w.taskId === taskId)
  if (queued !== undefined) return Effect.succeed(Option.some(waiting(queued, "waiting")))
  return ended(store, conversationId, taskId, afterSeq)
}
