/**
 * Stopping turns: one conversation (stop), or every conversation at once (emergency stop, shutdown). Stopping
 * cancels the conversation's waiting messages under its lock and interrupts its turn, which ends as a stopped
 * turn does (its text stored and labelled, its `done` sent); a stop returns once the turn has ended.
 */
import { Effect, Exit, Fiber, HashMap, Option, Ref } from "effect"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"
import type * as Tickets from "./Tickets.js"
import type { Turn } from "./Turn.js"
import { stoppedTotals } from "./Waiting.js"

/** A conversation's part of the engine; mutated only under `lock`. */
export interface ConversationState {
  readonly lock: Effect.Semaphore
  running: Turn | undefined
  readonly waiting: Array<Tickets.Waiting>
}

export interface Options {
  readonly states: Ref.Ref<HashMap.HashMap<string, ConversationState>>
  /** Runs `f` under the conversation's lock, on the state that is current once the lock is held. */
  readonly locked: <A, E, R>(conversationId: string, f: (state: ConversationState) => Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Drops an idle conversation's state; the caller holds the lock. */
  readonly prune: (conversationId: string, state: ConversationState) => Effect.Effect<void>
  readonly cancelWaiting: (conversationId: string, userMessageId: string, taskId: string) => Effect.Effect<TurnEvent>
}

interface Stopped {
  readonly turns: number
  readonly waiting: number
}

export const make = ({ cancelWaiting, locked, prune, states }: Options) => {
  /** Under the lock: the waiting messages cancelled, the turn labelled with `note`; the caller interrupts it. */
  // The generators are made once, not per call: on Node 20 a generator function made per call gets a map of its own,
  // which keeps what it captured alive through scavenges until a full collection (docs/decisions.md).
  const stopStateLocked = Effect.fnUntraced(function*(conversationId: string, note: string, state: ConversationState) {
    const waiting = state.waiting.splice(0)
    for (const w of waiting) {
      const done = yield* cancelWaiting(conversationId, w.userMessageId, w.taskId)
      w.started.done(Exit.succeed({ _tag: "Cancelled", done }))
    }
    const turn = state.running
    if (turn !== undefined) turn.stopNote = note
    else yield* prune(conversationId, state)
    return { turn, waiting: waiting.length }
  })
  const stopLocked = (conversationId: string, note: string) => (state: ConversationState) =>
    stopStateLocked(conversationId, note, state)

  /** Stops a conversation's turn and waiting messages; returns what was stopped once the turn has ended. */
  const stopConversation: (conversationId: string, note: string) => Effect.Effect<Stopped> = Effect.fnUntraced(function*(
    conversationId: string,
    note: string
  ) {
    const { turn, waiting } = yield* locked(conversationId, stopLocked(conversationId, note))
    // Interrupting waits for the turn's end: its text stored, labelled stopped, and its `done` sent.
    if (turn?.fiber !== undefined) yield* Fiber.interrupt(turn.fiber)
    return { turns: turn === undefined ? 0 : 1, waiting }
  })

  /**
   * Every conversation, without a fiber each (a fork per conversation, 200 for the emergency stop's 200 turns, was
   * a good part of its work): a lock that is free, as it nearly always is, is taken on this fiber; a conversation
   * whose lock is held (a start committing) or whose state was replaced meanwhile is stopped as `stop` does, side by
   * side with the interruption of every other turn (all at once), not after their ends.
   */
  const stopEverything = Effect.fnUntraced(function*(note: string) {
    const stopped: Array<Stopped> = []
    const fibers: Array<Fiber.RuntimeFiber<void>> = []
    const busy: Array<string> = []
    for (const [conversationId, state] of yield* Ref.get(states)) {
      const now = yield* state.lock.withPermitsIfAvailable(1)(Effect.flatMap(Ref.get(states), (map) =>
        Option.contains(HashMap.get(map, conversationId), state)
          ? Effect.asSome(stopLocked(conversationId, note)(state))
          : Effect.succeedNone))
      if (Option.isNone(now) || Option.isNone(now.value)) {
        busy.push(conversationId)
        continue
      }
      const { turn, waiting } = now.value.value
      if (turn?.fiber !== undefined) fibers.push(turn.fiber)
      stopped.push({ turns: turn === undefined ? 0 : 1, waiting })
    }
    const interrupted = Fiber.interruptAll(fibers)
    const others: ReadonlyArray<Stopped> = busy.length === 0
      ? yield* Effect.as(interrupted, [])
      : yield* Effect.zipLeft(
        Effect.forEach(busy, (id) => stopConversation(id, note), { concurrency: "unbounded" }),
        interrupted,
        { concurrent: true }
      )
    return stoppedTotals([...stopped, ...others])
  })

  return { stopConversation, stopEverything }
}
