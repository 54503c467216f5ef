/**
 * PreferenceStore on the node's SQLite database. Each write remembers the value
 * it replaced; an undo puts that value back when the write is at most
 * `undoWindowMillis` old and was not undone yet. Reads and changes of one
 * write or undo happen in one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, HashMap, Layer, Option, Ref } from "effect"
import { type PreferenceState, PreferenceStore, type UndoOutcome, undoWindowMillis } from "../../../services/node/PreferenceStore.js"

type Row = Record<string, unknown>

/** `updatedAt` of a preference that was never written: it has had its default since ever. */
export const neverWritten = "1970-01-01T00:00:00.000Z"

export const reasons = {
  neverWritten: "nothing to undo: the preference was never changed",
  alreadyUndone: "nothing to undo: the last change was already undone",
  expired: `the last change is older than ${undoWindowMillis / 60_000} minutes`
} as const

const isoOf = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

const stateOf = (row: Row): PreferenceState => ({
  value: JSON.parse(String(row.value)) as unknown,
  updatedAt: String(row.updatedAt)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const current = (key: string) =>
    Effect.map(
      sql<Row>`SELECT value, updated_at FROM preferences WHERE key = ${key}`,
      (rows) => Option.map(Option.fromNullable(rows[0]), stateOf)
    )

  const store = (key: string, json: string, at: string) =>
    sql`INSERT INTO preferences (key, value, updated_at) VALUES (${key}, ${json}, ${at})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`

  const set = (key: string, value: unknown) =>
    Effect.gen(function*() {
      const at = isoOf(yield* Clock.currentTimeMillis)
      const json = JSON.stringify(value ?? null)
      const before = yield* current(key)
      // Never set before: the undo restores the default, which every preference reads as null.
      const previous = Option.match(before, { onNone: () => "null", onSome: (state) => JSON.stringify(state.value) })
      yield* store(key, json, at)
      yield* sql`INSERT INTO preference_undo (key, previous_value, written_at, undone_at)
        VALUES (${key}, ${previous}, ${at}, NULL)
        ON CONFLICT (key) DO UPDATE SET previous_value = excluded.previous_value,
          written_at = excluded.written_at, undone_at = NULL`
      return { value: JSON.parse(json) as unknown, updatedAt: at } satisfies PreferenceState
    }).pipe(sql.withTransaction, Effect.orDie)

  const undo = (key: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const state = Option.getOrElse(yield* current(key), (): PreferenceState => ({ value: null, updatedAt: neverWritten }))
      const [step] = yield* sql<Row>`SELECT previous_value, written_at, undone_at FROM preference_undo WHERE key = ${key}`
      const refused = (reason: string): UndoOutcome => ({ undone: false, reason, state })
      if (step === undefined) return refused(reasons.neverWritten)
      if (step.undoneAt !== null) return refused(reasons.alreadyUndone)
      if (now - Date.parse(String(step.writtenAt)) > undoWindowMillis) return refused(reasons.expired)
      const at = isoOf(now)
      const previous = String(step.previousValue)
      yield* store(key, previous, at)
      yield* sql`UPDATE preference_undo SET undone_at = ${at} WHERE key = ${key}`
      return { undone: true, state: { value: JSON.parse(previous) as unknown, updatedAt: at } } satisfies UndoOutcome
    }).pipe(sql.withTransaction, Effect.orDie)

  /**
   * Values as last read or written, so a read on the hot path (every package tool call reads the execution
   * policy) costs no statement. Only this store writes the table; a write bumps `generation`, and a read that
   * began before it does not put back what it read.
   */
  const cache = yield* Ref.make({ generation: 0, values: HashMap.empty<string, Option.Option<PreferenceState>>() })
  const written = (key: string, state: Option.Option<PreferenceState>) =>
    Ref.update(cache, ({ generation, values }) => ({ generation: generation + 1, values: HashMap.set(values, key, state) }))

  const get = (key: string) =>
    Effect.flatMap(Ref.get(cache), ({ generation, values }) =>
      Option.match(HashMap.get(values, key), {
        onSome: Effect.succeed,
        onNone: () =>
          Effect.tap(Effect.orDie(current(key)), (state) =>
            Ref.update(cache, (now) =>
              now.generation === generation ? { generation, values: HashMap.set(now.values, key, state) } : now))
      }))

  return PreferenceStore.of({
    get,
    set: (key, value) => Effect.tap(set(key, value), (state) => written(key, Option.some(state))),
    undo: (key) => Effect.tap(undo(key), (outcome) => outcome.undone ? written(key, Option.some(outcome.state)) : Effect.void)
  })
})

export const layer = Layer.effect(PreferenceStore, make)
