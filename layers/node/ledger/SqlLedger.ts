/**
 * The effect ledger on its own SQLite file (LedgerDatabase.ts), with the inbox notice of an unknown effect
 * written into the main database's `notices` table (the context's `SqlClient`).
 *
 * Writes fail with `LedgerUnavailable` (never a defect) when the file cannot be written; reads then answer
 * what the file still gives, or nothing (logged). Start-up recovery: an effect still `sent` was cut off by a
 * restart (a kill -9 during the call): it becomes unknown (`interrupted-by-restart`), and every unknown
 * effect gets its notice if it lacks one.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Effect, Exit, Layer, Option, Ref, Schema, Scope, SynchronizedRef } from "effect"
import { Surface } from "../../../schema/node/Security.js"
import { makeId } from "../../../services/common/Ids.js"
import {
  type EffectRecord,
  Ledger,
  type NewEffect,
  reconciledStatus,
  Risk,
  settledTaskStatus,
  type UnknownReason
} from "../../../services/node/Ledger.js"
import { EffectNotFound, EffectNotUnknown, LedgerUnavailable } from "../../../services/node/LedgerErrors.js"
import { describe, open, type Opened, type OpenOptions } from "./LedgerDatabase.js"

const Flag = Schema.transform(Schema.Literal(0, 1), Schema.Boolean, {
  strict: true,
  decode: (bit) => bit === 1,
  encode: (flag) => (flag ? 1 : 0)
})
const Json = Schema.parseJson()

const EffectRow = Schema.Struct({
  id: Schema.String,
  taskId: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  packageId: Schema.String,
  packageDigest: Schema.String,
  tool: Schema.String,
  risk: Risk,
  origin: Surface,
  input: Json,
  summary: Schema.String,
  status: Schema.Literal("sent", "answered", "unknown", "confirmed", "did-not-happen"),
  mayHaveRun: Flag,
  reason: Schema.NullOr(
    Schema.Literal("timed-out", "cancelled", "unreachable", "tool-failed", "interrupted-by-restart")
  ),
  answer: Schema.NullOr(Json),
  checked: Flag,
  recordedAt: Schema.String,
  answeredAt: Schema.NullOr(Schema.String),
  reconciledOutcome: Schema.NullOr(Schema.Literal("confirmed", "failed")),
  reconciledSource: Schema.NullOr(Schema.Literal("click", "chat", "voice")),
  reconciledBy: Schema.NullOr(Surface),
  reconciledAt: Schema.NullOr(Schema.String),
  taskStatus: Schema.NullOr(Schema.Literal("succeeded", "settled-unchecked", "failed"))
})
type EffectRow = typeof EffectRow.Type

const decodeRows = Schema.decodeUnknown(Schema.Array(EffectRow))

const toRecord = (row: EffectRow): EffectRecord => {
  const { id, reconciledAt, reconciledBy, reconciledOutcome, reconciledSource, taskStatus, ...rest } = row
  return {
    ...rest,
    effectId: id,
    reconciled: reconciledAt === null || reconciledBy === null || reconciledOutcome === null || taskStatus === null
      ? null
      : { outcome: reconciledOutcome, source: reconciledSource, by: reconciledBy, at: reconciledAt, taskStatus }
  }
}

/** The inbox notice of an unknown effect: one per effect, whoever writes it first. */
export const noticeIdOf = (effectId: string) => `ntc_${effectId}`

export type Options = OpenOptions

/**
 * The two writes of every risky call, as constant texts run on the ledger's own handle (prepared once): a record
 * and its answer. Every other statement goes through the client.
 */
const insertEffect = `INSERT INTO effects (id, task_id, conversation_id, package_id, package_digest, tool, risk, origin,
  input, summary, status, may_have_run, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', 1, ?)`
const answerEffect = `UPDATE effects SET status = 'answered', answer = ?, answered_at = ? WHERE id = ? AND status = 'sent'`

/** `DateTime.formatIso` of the same instant, without making the `DateTime` (a record's own CPU). */
const isoOf = (millis: number) => new Date(millis).toISOString()

export const make = (dataDir: string, options: Options = {}) =>
  Effect.gen(function*() {
    const main = yield* SqlClient.SqlClient
    const layerScope = yield* Effect.scope
    const now = Effect.map(Clock.currentTimeMillis, isoOf)

    /** Writes the notices of these unknown effects; a main database that refuses is logged, and repaired at start. */
    const notify = (records: ReadonlyArray<EffectRecord>) =>
      Effect.forEach(records, (record) =>
        Effect.flatMap(now, (at) =>
          main`INSERT INTO notices ${
            main.insert({
              id: noticeIdOf(record.effectId),
              kind: "unknown-effect",
              conversationId: record.conversationId,
              subjectId: record.effectId,
              data: JSON.stringify({
                effectId: record.effectId,
                taskId: record.taskId,
                conversationId: record.conversationId,
                summary: record.summary,
                packageId: record.packageId,
                tool: record.tool,
                reason: record.reason
              }),
              state: "unread",
              createdAt: at
            })
          } ON CONFLICT (id) DO NOTHING`), { discard: true }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logWarning("The inbox notice of an unknown effect could not be written", describe(cause))
        )
      )

    /** Effects cut off by the last run, and unknown effects whose notice is missing. */
    const recover = (client: SqlClient.SqlClient) =>
      Effect.gen(function*() {
        const cut = yield* client`UPDATE effects SET status = 'unknown', reason = 'interrupted-by-restart', may_have_run = 1
          WHERE status = 'sent' RETURNING id`
        if (cut.length > 0) yield* Effect.logWarning(`${cut.length} effect(s) cut off by a restart are now unknown`)
        yield* notify(yield* Effect.flatMap(client`SELECT * FROM effects WHERE status = 'unknown'`, decodeRows).pipe(
          Effect.map((rows) => rows.map(toRecord))
        ))
        return true
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("The effect ledger's start-up recovery did not run", describe(cause)), false)
        )
      )

    // The open file, or none: a write that fails closes it, and the next one opens it again, so a ledger whose
    // file or folder is writable again (or whose disk has room again) needs no restart.
    const state = yield* SynchronizedRef.make(Option.none<Opened>())
    // Recovery runs once per process, before the first record: a later reopen must not take this run's calls in
    // flight for calls cut off by a restart.
    const recovered = yield* Ref.make(false)
    const openOrReuse = SynchronizedRef.modifyEffect(state, (current) =>
      Option.match(current, {
        onSome: (opened) => Effect.succeed([opened, current] as const),
        onNone: () =>
          Effect.gen(function*() {
            const opened = yield* open(dataDir, layerScope, options)
            if (!(yield* Ref.get(recovered))) {
              if (yield* recover(opened.client)) yield* Ref.set(recovered, true)
            }
            return [opened, Option.some(opened)] as const
          })
      }))
    // The open file without taking the lock: every record goes through here.
    const current = Effect.flatMap(
      SynchronizedRef.get(state),
      Option.match({ onSome: Effect.succeed, onNone: () => openOrReuse })
    )
    const client = Effect.map(current, (opened) => opened.client)
    /** Drops the file after a failed write (only if it is still the one that failed). */
    const reopenLater = (failed: Opened) =>
      SynchronizedRef.updateEffect(state, (current) =>
        Option.isSome(current) && current.value === failed
          ? Effect.as(Scope.close(current.value.scope, Exit.void), Option.none())
          : Effect.succeed(current))

    yield* client.pipe(
      Effect.catchAll((error) => Effect.logWarning("The effect ledger cannot be opened; risky calls will be refused", error.detail))
    )

    const unavailable = (operation: LedgerUnavailable["operation"]) => (cause: Cause.Cause<unknown>) =>
      Effect.flatMap(
        Effect.logWarning(`The effect ledger refused a write (${operation})`, describe(cause)),
        () => Effect.fail(new LedgerUnavailable({ operation, detail: describe(cause) }))
      )

    /**
     * A write on the ledger: any failure of the database (or of opening it) is `LedgerUnavailable`. Its span
     * captures no stack trace (a `new Error()` per record otherwise).
     */
    const write = <A, E>(operation: LedgerUnavailable["operation"], body: (opened: Opened) => Effect.Effect<A, E>) => {
      const attempt = Effect.flatMap(current, (opened) =>
        Effect.onError(body(opened), (cause) => (Cause.isInterruptedOnly(cause) ? Effect.void : reopenLater(opened))))
      // Once more on a freshly opened file: the open one may predate a repair (a file made writable again keeps
      // its read-only handle). Every write is conditional or new, so a second attempt changes nothing twice.
      return attempt.pipe(
        Effect.catchAllCause(() => attempt),
        Effect.catchAllCause(unavailable(operation)),
        Effect.withSpan(`Ledger.${operation}`, { captureStackTrace: false })
      )
    }

    const find = (sql: SqlClient.SqlClient, effectId: string) =>
      Effect.map(
        Effect.flatMap(sql`SELECT * FROM effects WHERE id = ${effectId}`, decodeRows),
        (rows) => Option.map(Option.fromNullable(rows[0]), toRecord)
      )

    /** A read: what the file gives, or nothing when it cannot be read (never a failure). */
    const read = <A>(what: string, empty: A, body: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      Effect.flatMap(client, body).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning(`The effect ledger could not be read (${what})`, describe(cause)), empty)
        )
      )

    const record = (effect: NewEffect) =>
      write("record", (opened) =>
        Effect.flatMap(makeId("eff"), (effectId) =>
          Effect.clockWith((clock) => {
            const recordedAt = isoOf(clock.unsafeCurrentTimeMillis())
            const stored: EffectRecord = {
              ...effect,
              effectId,
              status: "sent",
              mayHaveRun: true,
              reason: null,
              answer: null,
              checked: false,
              recordedAt,
              answeredAt: null,
              reconciled: null
            }
            return Effect.as(
              opened.write(insertEffect, [
                effectId,
                effect.taskId,
                effect.conversationId,
                effect.packageId,
                effect.packageDigest,
                effect.tool,
                effect.risk,
                effect.origin,
                JSON.stringify(effect.input ?? null),
                effect.summary,
                recordedAt
              ]),
              stored
            )
          })))

    const answer: Ledger["Type"]["answer"] = (effectId, given) =>
      write("answer", (opened) =>
        Effect.clockWith((clock) =>
          opened.write(answerEffect, [
            JSON.stringify({ isError: given.isError, output: given.output ?? null }),
            isoOf(clock.unsafeCurrentTimeMillis()),
            effectId
          ], true)))

    const unknown = (effectId: string, reason: UnknownReason) =>
      write("unknown", ({ client: sql, settle }) =>
        Effect.gen(function*() {
          // After the call, as an answer: the WAL's checkpoint, if due, is paid here rather than by a record.
          yield* settle
          const moved = yield* sql`UPDATE effects SET status = 'unknown', reason = ${reason}, may_have_run = 1
            WHERE id = ${effectId} AND status = 'sent' RETURNING id`
          return [yield* find(sql, effectId), moved.length > 0] as const
        })).pipe(
        Effect.flatMap(([current, moved]) =>
          Option.match(current, {
            onNone: () => Effect.dieMessage(`The effect ledger holds no effect ${effectId}`),
            // The notice goes to the main database, outside the ledger's failure: the effect is unknown either way.
            onSome: (record) => Effect.as(moved ? notify([record]) : Effect.void, record)
          })
        )
      )

    const markChecked: Ledger["Type"]["markChecked"] = (effectId) =>
      write("mark-checked", ({ client: sql }) => sql`UPDATE effects SET checked = 1 WHERE id = ${effectId} AND reconciled_at IS NULL`).pipe(
        Effect.asVoid
      )

    const get: Ledger["Type"]["get"] = (effectId) =>
      read("get", Option.none<EffectRecord>(), (sql) => find(sql, effectId))

    const unknownEffects: Ledger["Type"]["unknownEffects"] = read("unknown effects", [], (sql) =>
      Effect.map(
        Effect.flatMap(sql`SELECT * FROM effects WHERE status = 'unknown' ORDER BY recorded_at, rowid`, decodeRows),
        (rows) => rows.map(toRecord)
      ))

    type Settling =
      | { readonly _tag: "won"; readonly record: EffectRecord }
      | { readonly _tag: "missing" }
      | { readonly _tag: "settled"; readonly status: EffectNotUnknown["status"] }

    const reconcile: Ledger["Type"]["reconcile"] = (effectId, given) =>
      write("reconcile", ({ client: sql }) =>
        Effect.gen(function*() {
          const current = yield* find(sql, effectId)
          if (Option.isNone(current)) return { _tag: "missing" } as Settling
          const { checked, status } = current.value
          if (status !== "unknown") return { _tag: "settled", status } as Settling
          const at = yield* now
          // Conditional even inside the transaction: whatever reaches the file, one answer wins.
          const moved = yield* sql`UPDATE effects SET
              status = ${reconciledStatus(given.outcome)},
              may_have_run = ${given.outcome === "confirmed" ? 1 : 0},
              reconciled_outcome = ${given.outcome},
              reconciled_source = ${given.source ?? null},
              reconciled_by = ${given.by},
              reconciled_at = ${at},
              task_status = ${settledTaskStatus(given.outcome, checked)}
            WHERE id = ${effectId} AND status = 'unknown' RETURNING *`.pipe(Effect.flatMap(decodeRows))
          const won = moved[0]
          return won === undefined ? { _tag: "settled", status: "confirmed" } as Settling : { _tag: "won", record: toRecord(won) } as Settling
        }).pipe(sql.withTransaction)).pipe(
        Effect.flatMap((settling): Effect.Effect<EffectRecord, EffectNotFound | EffectNotUnknown> => {
          switch (settling._tag) {
            case "won":
              return Effect.succeed(settling.record)
            case "missing":
              return Effect.fail(new EffectNotFound({ effectId }))
            case "settled":
              return Effect.fail(new EffectNotUnknown({ effectId, status: settling.status }))
          }
        })
      )

    return Ledger.of({ record, answer, unknown, markChecked, get, unknownEffects, reconcile })
  })

/** The ledger of a data dir; needs the main database (`SqlClient`) for the inbox notices. */
export const layer = (dataDir: string, options: Options = {}): Layer.Layer<Ledger, never, SqlClient.SqlClient> =>
  Layer.scoped(Ledger, make(dataDir, options))
