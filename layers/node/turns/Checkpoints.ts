/**
 * Writing running turns to the store. A delta touches no database: turns are
 * marked dirty and written together, at most every `checkpointEvery` and at once
 * when a turn ends or runs a tool; a crash loses at most that much of a reply.
 */
import { Array as Arr, Duration, Effect, Exit } from "effect"
import { OneShot } from "../../../services/common/OneShot.js"
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
/**
 * Turns per transaction while every turn is being stopped (emergency stop, shutdown), written one after another
 * without a timer between them: every stopped turn's `done` waits for the whole batch, and no other turn runs a
 * step that a gap would let through, so the gaps only delayed the stop's end.
 */
const stoppingChunk = 64

export const resolutionOf = (status: Status): Resolution =>
  status === "complete" ? "answered" : status === "stopped" ? "stopped" : "failed"

export interface Checkpoints {
  /** Notes that a turn has something the store lacks; synchronous, for the turn's hot path. */
  readonly mark: (turn: Turn) => void
  /**
   * Writes every dirty turn's new events and reply; for a turn that has ended, also its end and its `done` event,
   * built from the reply as saved. Ending turns call it at once, so the turns an emergency stop ends are written
   * together: the first writes, the others wait for the batch that takes theirs. Uninterruptible: the events it
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
    // Listed, not `{ ...final, blocks }`: on this V8 a spread followed by a property makes a hidden class per object,
    // one per checkpoint of every turn (docs/decisions.md, "Widget presses: hidden classes made per press").
    reply: {
      messageId: turn.assistantMessageId,
      patch: final === undefined ? { blocks: [...turn.blocks] } : { status: final.status, note: final.note, blocks: [...turn.blocks] }
    },
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
export const make = (
  store: ConversationStore["Type"],
  transactions: Transactions["Type"],
  stoppingAll: () => boolean = () => false
) =>
  Effect.gen(function*() {
    /** Turns marked since the last batch took them; only ever touched synchronously. */
    let dirty: Array<Turn> = []
    /** Open while some turn is dirty: wakes the periodic writer only when there is something to write. */
    const pending = yield* Effect.makeLatch(false)
    /** Whether some fiber is writing batches now; it goes on until a look at the queue finds nothing. */
    let writing = false
    /** Callers that came while a batch was being written: the next batch takes what they marked, then wakes them. */
    let waiters: OneShot<void, never> | undefined

    const mark = (turn: Turn) => {
      if (turn.dirty) return
      turn.dirty = true
      dirty.push(turn)
      pending.unsafeOpen()
    }

    const writeBatch = (taken: ReadonlyArray<Turn>) => {
      const checkpoints = taken.map(checkpointOf)
      if (stoppingAll()) {
        return Effect.forEach(
          Arr.chunksOf(checkpoints, stoppingChunk),
          (chunk) => transactions.atomically(store.checkpoint(chunk)),
          { discard: true }
        )
      }
      return Effect.forEach(
        Arr.chunksOf(checkpoints, checkpointChunk),
        // A zero sleep is a timer: unlike yieldNow (a microtask), it lets the event loop run timers and I/O first.
        (chunk, i) =>
          i === 0
            ? transactions.atomically(store.checkpoint(chunk))
            : Effect.zipRight(Effect.sleep(Duration.zero), transactions.atomically(store.checkpoint(chunk))),
        { discard: true }
      )
    }

    /**
     * Batches until one finds the queue empty. Each batch takes the callers waiting at its start: whatever they
     * marked before they came is in it (or in an earlier one), and they are woken after its COMMIT.
     */
    const writeAll: Effect.Effect<void> = Effect.suspend(() => {
      const woken = waiters
      waiters = undefined
      const taken = dirty
      dirty = []
      const batch = taken.length === 0 ? Effect.void : writeBatch(taken)
      return Effect.onExit(batch, (exit) => {
        if (Exit.isFailure(exit)) {
          writing = false
          const left = waiters
          waiters = undefined
          return Effect.sync(() => {
            woken?.done(Exit.failCause(exit.cause))
            left?.done(Exit.failCause(exit.cause))
          })
        }
        return woken === undefined ? Effect.void : Effect.sync(() => woken.done(Exit.void))
      }).pipe(Effect.zipRight(Effect.suspend(() => {
        if (taken.length === 0 && waiters === undefined) {
          writing = false
          return Effect.void
        }
        return writeAll
      })))
    })

    /**
     * One writer at a time, and no lock to wait on: when a turn ends, every other turn that the same stop ended
     * waits for the one batch that writes them all. With a semaphore each release woke every fiber still waiting
     * for it (Effect's Semaphore runs all its waiters while a permit looks free), so the 200 turns an emergency
     * stop ends went through about 20,000 wake-ups to find, one after another, that their checkpoint was written.
     */
    const flush: Effect.Effect<void> = Effect.uninterruptible(Effect.suspend(() => {
      if (!writing) {
        writing = true
        return writeAll
      }
      // A OneShot, not a Deferred (services/common/OneShot.ts says why): one per batch that callers wait for.
      waiters ??= new OneShot<void, never>()
      return waiters.wait()
    }))

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
