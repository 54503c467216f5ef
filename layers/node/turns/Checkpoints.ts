/**
 * Writing running turns to the store. A delta touches no database: turns are
 * marked dirty and written together, at most every `checkpointEvery` and at once
 * when a turn ends or runs a tool; a crash loses at most that much of a reply.
 */
import { Array as Arr, Chunk, Duration, Effect, Queue } from "effect"
import type { MessageResult, Resolution } from "../../../schema/node/Conversation.js"
import type { Checkpoint, ConversationStore, NewMessage } from "../../../services/node/ConversationStore.js"
import type { Transactions } from "../../../services/node/Transactions.js"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"
import type { Status, Turn } from "./Turn.js"

const checkpointEvery = Duration.millis(250)
/**
 * Turns per checkpoint transaction. Writing every running turn in one transaction held the event loop for
 * ~30 ms at 100 streams, and every other stream's next delta waited for it; in chunks, with timers and I/O let
 * run between them, no write holds it for more than a few milliseconds.
 */
const checkpointChunk = 16

export const resolutionOf = (status: Status): Resolution =>
  status === "complete" ? "answered" : status === "stopped" ? "stopped" : "failed"

export interface Checkpoints {
  /** Notes that a turn has something the store lacks; synchronous, for the turn's hot path. */
  readonly mark: (turn: Turn) => void
  /**
   * Writes every dirty turn's new events and reply; for a turn that has ended, also its end and its `done` event,
   * built from the reply as saved. Ending turns call it at once, so the turns an emergency stop ends are written
   * together: each waits for the lock, and the first to get it takes all of them. Uninterruptible: the events it
   * takes are marked stored before they are.
   */
  readonly flush: Effect.Effect<void>
}

const checkpointOf = (turn: Turn): Checkpoint => {
  const events = turn.log.slice(turn.persisted)
  turn.persisted = turn.log.length
  turn.dirty = false
  const final = turn.closing === undefined ? turn.final : undefined
  return {
    conversationId: turn.conversationId,
    taskId: turn.taskId,
    events,
    reply: { messageId: turn.assistantMessageId, patch: { ...final, blocks: [...turn.blocks] } },
    closing: final === undefined ? undefined : (saved) => {
      const done: TurnEvent = {
        taskId: turn.taskId,
        seq: turn.seq + 1,
        event: "done",
        data: {
          resolution: resolutionOf(final.status),
          taskId: turn.taskId,
          messageIds: [turn.userMessageId, turn.assistantMessageId],
          timeline: {
            conversationId: turn.conversationId,
            entries: [...turn.entries, saved.entry].sort((a, b) => a.seq - b.seq),
            last: saved.last
          }
        } satisfies MessageResult
      }
      turn.closing = done
      return done
    }
  }
}

/**
 * `transactions`: a checkpoint is a unit of work like a turn's start, so it shares a group's COMMIT with the units
 * waiting beside it (SqlTransactions) instead of a transaction of its own.
 */
export const make = (store: ConversationStore["Type"], transactions: Transactions["Type"]) =>
  Effect.gen(function*() {
    const dirty = yield* Queue.unbounded<Turn>()
    /** Open while some turn is dirty: wakes the periodic writer only when there is something to write. */
    const pending = yield* Effect.makeLatch(false)
    const lock = yield* Effect.makeSemaphore(1)

    const mark = (turn: Turn) => {
      if (turn.dirty) return
      turn.dirty = true
      dirty.unsafeOffer(turn)
      pending.unsafeOpen()
    }

    const flush = lock.withPermits(1)(Effect.flatMap(Queue.takeAll(dirty), (taken) => {
      if (Chunk.isEmpty(taken)) return Effect.void
      const checkpoints = Chunk.toReadonlyArray(taken).map(checkpointOf)
      return Effect.forEach(
        Arr.chunksOf(checkpoints, checkpointChunk),
        // A zero sleep is a timer: unlike yieldNow (a microtask), it lets the event loop run timers and I/O first.
        (chunk, i) =>
          i === 0
            ? transactions.atomically(store.checkpoint(chunk))
            : Effect.zipRight(Effect.sleep(Duration.zero), transactions.atomically(store.checkpoint(chunk))),
        { discard: true }
      )
    })).pipe(Effect.uninterruptible)

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      yield* pending.await
      yield* Effect.sleep(checkpointEvery)
      // Closed before the write takes the batch: whatever is marked after that opens it again.
      pending.unsafeClose()
      yield* flush
    })))

    return { mark, flush } satisfies Checkpoints
  })

/** The assistant's row a turn writes its reply into, empty and `writing` until the turn checkpoints it. */
export const replyRow = (conversationId: string, taskId: string): NewMessage => ({
  conversationId,
  role: "assistant",
  origin: null,
  channel: null,
  status: "writing",
  taskId,
  blocks: []
})
