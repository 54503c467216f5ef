/**
 * The deadlines of service calls on the Clock, without a fiber per call. A call arms its deadline (an entry in a
 * Ref) and disarms it when it ends; one sleeper fiber, forked into the runtime's scope only when no sleeper waits
 * for an earlier time, sleeps until the earliest deadline and expires what is due. With one call timeout every new
 * deadline is later than the one the sleeper waits for, so a run of calls forks about one sleeper per timeout
 * instead of one timer fiber each (whose fork, sleep and interruption were a visible share of a widget press, and
 * whose objects a scavenge copied: docs/decisions.md, "Widget presses: the press's own work").
 *
 * The sleeper sleeps on the Clock of the fiber that forked it (the caller's, as the timer fiber did), so a TestClock
 * moves it. An entry holds only its `expire` callback, and only until it is disarmed or due.
 */
import { Clock, Effect, HashMap, Ref, Scheduler, type Scope } from "effect"

interface Entry {
  readonly at: number
  readonly expire: () => void
}

interface State {
  readonly id: number
  readonly entries: HashMap.HashMap<number, Entry>
  /** The time the current sleeper wakes at; undefined when none sleeps. */
  readonly until: number | undefined
  /** Which sleeper is current: one that finds another number has been replaced by an earlier one. */
  readonly generation: number
}

export interface Deadlines {
  /**
   * Calls `expire` once `millis` of the Clock have passed, unless the returned effect (disarm) ran first. `expire`
   * runs on the sleeper's fiber and must not block.
   */
  readonly arm: (millis: number, expire: () => void) => Effect.Effect<Effect.Effect<void>>
}

/** Entries due at `now`, and the earliest of the others. */
const split = (entries: HashMap.HashMap<number, Entry>, now: number) => {
  const due: Array<readonly [number, Entry]> = []
  let next: number | undefined
  for (const [id, entry] of entries) {
    if (entry.at <= now) due.push([id, entry])
    else if (next === undefined || entry.at < next) next = entry.at
  }
  return { due, next }
}

export const make = (scope: Scope.Scope) =>
  Effect.map(Ref.make<State>({ id: 0, entries: HashMap.empty(), until: undefined, generation: 0 }), (state): Deadlines => {
    /** Sleeps until `until`, expires what is due, and goes on to the next deadline while it is the current sleeper. */
    const sleeper = (generation: number, first: number): Effect.Effect<void> =>
      Effect.gen(function*() {
        let until: number | undefined = first
        while (until !== undefined) {
          yield* Effect.sleep(Math.max(0, until - (yield* Clock.currentTimeMillis)))
          const now = yield* Clock.currentTimeMillis
          const [due, next] = yield* Ref.modify(state, (s): [readonly [ReadonlyArray<Entry>, number | undefined], State] => {
            const { due, next } = split(s.entries, now)
            const entries = due.length === 0 ? s.entries : HashMap.removeMany(s.entries, due.map(([id]) => id))
            const expired = due.map(([, entry]) => entry)
            // Replaced by a sleeper for an earlier deadline: that one goes on from there.
            if (s.generation !== generation) return [[expired, undefined], { ...s, entries }]
            return [[expired, next], { ...s, entries, until: next }]
          })
          for (const entry of due) entry.expire()
          until = next
        }
      })

    const arm: Deadlines["arm"] = (millis, expire) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const at = now + millis
        return Effect.flatMap(
          Ref.modify(state, (s): [readonly [number, number | undefined], State] => {
            const id = s.id + 1
            const entries = HashMap.set(s.entries, id, { at, expire })
            // A sleeper already waits for this deadline or an earlier one: it will get to this one.
            if (s.until !== undefined && s.until <= at) return [[id, undefined], { ...s, id, entries }]
            const generation = s.generation + 1
            return [[id, generation], { id, entries, until: at, generation }]
          }),
          ([id, generation]) => {
            const disarm = Ref.update(state, (s) => ({ ...s, entries: HashMap.remove(s.entries, id) }))
            // Interruptible whatever the caller's region (a widget press calls inside an uninterruptible one): the
            // runtime's scope must be able to end it. On the default scheduler whatever the caller's: a sleeper forked
            // from a turn's fiber would otherwise run on that turn's paced scheduler (turns/Pacing.ts) and keep it alive;
            // set here, on the rare fork, rather than by every caller around every arm.
            return generation === undefined
              ? Effect.succeed(disarm)
              : Effect.as(
                Effect.withScheduler(Effect.forkIn(Effect.interruptible(sleeper(generation, at)), scope), Scheduler.defaultScheduler),
                disarm
              )
          }
        )
      })

    return { arm }
  })
