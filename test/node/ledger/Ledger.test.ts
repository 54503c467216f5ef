/**
 * The effect ledger on real SQLite files in temporary data dirs: records that are on disk when `record`
 * returns and survive a rebuild of the layer, answers, unknown effects and their one inbox notice, the
 * start-up recovery after a node that died mid-call, reconcile once, and an unwritable ledger that answers
 * `LedgerUnavailable` while the layer (and so the node) still builds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { noticeIdOf } from "../../../layers/node/ledger/SqlLedger.js"
import { Ledger } from "../../../services/node/Ledger.js"
import { LedgerUnavailable } from "../../../services/node/LedgerErrors.js"
import { failingLedger, ledgerRows, makeReadOnly, sampleEffect, withLedger } from "../../support/Ledgers.js"
import { Database, query } from "../../support/NodeFixtures.js"
import { makeDataDir } from "../../support/NodeServer.js"

const noticesOf = (dataDir: string) =>
  query(dataDir, "SELECT id, kind, conversation_id, subject_id, data, state FROM notices WHERE kind = 'unknown-effect' ORDER BY id")
    .map((row) => ({ ...row, data: JSON.parse(row.data) }))

describe("recording", () => {
  it.effect("a record is committed when it returns, with status sent, and survives a rebuild with its answer", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const recorded = yield* withLedger(dataDir, (ledger) =>
        Effect.gen(function*() {
          const recorded = yield* ledger.record(sampleEffect())
          expect(recorded).toMatchObject({
            ...sampleEffect(),
            status: "sent",
            mayHaveRun: true,
            reason: null,
            answer: null,
            checked: false,
            answeredAt: null,
            reconciled: null
          })
          expect(recorded.effectId).toMatch(/^eff_[A-Za-z0-9_-]{16}$/)
          // Another connection (as another process would) sees the committed row before anything else happens.
          expect(ledgerRows(dataDir).map((row) => [row.id, row.status, JSON.parse(row.input)])).toEqual([
            [recorded.effectId, "sent", sampleEffect().input]
          ])
          yield* TestClock.adjust(Duration.seconds(2))
          yield* ledger.answer(recorded.effectId, { isError: false, output: { noteId: "n1" } })
          return recorded
        }))
      // A new layer on the same file: the answer is there, and nothing was taken for cut off.
      const again = yield* withLedger(dataDir, (ledger) => ledger.get(recorded.effectId))
      expect(Option.getOrThrow(again)).toMatchObject({
        effectId: recorded.effectId,
        status: "answered",
        answer: { isError: false, output: { noteId: "n1" } },
        answeredAt: "1970-01-01T00:00:02.000Z",
        recordedAt: "1970-01-01T00:00:00.000Z"
      })
      expect(noticesOf(dataDir)).toEqual([])
      // Its own file, in WAL mode (the synchronous level is per connection: see the benchmark for its cost).
      expect(ledgerRows(dataDir, "PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }])
      expect(fs.existsSync(path.join(dataDir, "node.db"))).toBe(true)
    }))

  it.effect("a tool's own error is an answer; a late answer to an unknown effect is discarded", () =>
    withLedger(makeDataDir(), (ledger) =>
      Effect.gen(function*() {
        const failed = yield* ledger.record(sampleEffect())
        yield* ledger.answer(failed.effectId, { isError: true, output: "no such notebook" })
        expect(Option.getOrThrow(yield* ledger.get(failed.effectId))).toMatchObject({
          status: "answered",
          answer: { isError: true, output: "no such notebook" }
        })
        // Unknown after an answer: the answer stands, nothing asks.
        expect(yield* ledger.unknown(failed.effectId, "timed-out")).toMatchObject({ status: "answered", reason: null })

        const late = yield* ledger.record(sampleEffect({ taskId: "task_2" }))
        yield* ledger.unknown(late.effectId, "timed-out")
        yield* ledger.answer(late.effectId, { isError: false, output: "done after all" })
        expect(Option.getOrThrow(yield* ledger.get(late.effectId))).toMatchObject({
          status: "unknown",
          reason: "timed-out",
          answer: null
        })
        expect(yield* ledger.get("eff_nothing")).toEqual(Option.none())
      })))
})

describe("unknown effects", () => {
  it.effect("an unknown effect may have run, is listed, and asks once in the inbox with its task", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      yield* withLedger(dataDir, (ledger) =>
        Effect.gen(function*() {
          const sent = yield* ledger.record(sampleEffect({ conversationId: "conv_9", taskId: "task_9" }))
          const unknown = yield* ledger.unknown(sent.effectId, "unreachable")
          expect(unknown).toMatchObject({ effectId: sent.effectId, status: "unknown", mayHaveRun: true, reason: "unreachable" })
          // Asked again (a second report of the same call): still one notice.
          yield* ledger.unknown(sent.effectId, "timed-out")
          expect((yield* ledger.unknownEffects).map((e) => [e.effectId, e.reason])).toEqual([[sent.effectId, "unreachable"]])
          expect(noticesOf(dataDir)).toEqual([
            {
              id: noticeIdOf(sent.effectId),
              kind: "unknown-effect",
              conversation_id: "conv_9",
              subject_id: sent.effectId,
              state: "unread",
              data: {
                effectId: sent.effectId,
                taskId: "task_9",
                conversationId: "conv_9",
                summary: "notes-service · add_note",
                packageId: "@clark-examples/notes-service",
                tool: "add_note",
                reason: "unreachable"
              }
            }
          ])
        }))
    }))

  it.effect("an id never recorded is the caller's defect", () =>
    withLedger(makeDataDir(), (ledger) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(ledger.unknown("eff_never", "cancelled"))
        expect(exit._tag === "Failure" && exit.cause._tag === "Die").toBe(true)
      })))
})

describe("start-up recovery", () => {
  it.effect("an effect still sent when the node stopped (kill -9) is unknown after the restart, with exactly one notice", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const [cut, answered] = yield* withLedger(dataDir, (ledger) =>
        Effect.gen(function*() {
          const cut = yield* ledger.record(sampleEffect({ taskId: "task_cut" }))
          const answered = yield* ledger.record(sampleEffect({ taskId: "task_ok" }))
          yield* ledger.answer(answered.effectId, { isError: false, output: "ok" })
          // Dropped here without an answer for `cut`, as a process that died during the call.
          return [cut, answered] as const
        }))
      expect(ledgerRows(dataDir).map((row) => row.status)).toEqual(["sent", "answered"])
      yield* withLedger(dataDir, (ledger) =>
        Effect.gen(function*() {
          expect(Option.getOrThrow(yield* ledger.get(cut.effectId))).toMatchObject({
            status: "unknown",
            reason: "interrupted-by-restart",
            mayHaveRun: true
          })
          expect(Option.getOrThrow(yield* ledger.get(answered.effectId)).status).toBe("answered")
          expect((yield* ledger.unknownEffects).map((e) => e.effectId)).toEqual([cut.effectId])
        }))
      expect(noticesOf(dataDir).map((n) => [n.subject_id, n.data.taskId, n.data.reason])).toEqual([
        [cut.effectId, "task_cut", "interrupted-by-restart"]
      ])
      // Another restart adds nothing; a notice that went missing (the main database lost it) comes back.
      yield* withLedger(dataDir, () => Effect.void)
      expect(noticesOf(dataDir)).toHaveLength(1)
      const main = new Database(path.join(dataDir, "node.db"))
      main.prepare("DELETE FROM notices WHERE kind = 'unknown-effect'").run()
      main.close()
      yield* withLedger(dataDir, () => Effect.void)
      expect(noticesOf(dataDir).map((n) => n.subject_id)).toEqual([cut.effectId])
    }))
})

describe("reconcile", () => {
  it.effect("is recorded once with who, when and the source as sent; the task settles by the rule", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const ids = yield* withLedger(dataDir, (ledger) =>
        Effect.gen(function*() {
          const unknownOf = (taskId: string) =>
            Effect.flatMap(ledger.record(sampleEffect({ taskId })), (e) => ledger.unknown(e.effectId, "timed-out"))
          const unchecked = yield* unknownOf("task_a")
          const checked = yield* unknownOf("task_b")
          const failed = yield* unknownOf("task_c")
          yield* ledger.markChecked(checked.effectId)
          yield* TestClock.adjust(Duration.minutes(3))

          const a = yield* ledger.reconcile(unchecked.effectId, { outcome: "confirmed", source: "chat", by: "person" })
          expect(a).toMatchObject({
            status: "confirmed",
            mayHaveRun: true,
            reconciled: { outcome: "confirmed", source: "chat", by: "person", at: "1970-01-01T00:03:00.000Z", taskStatus: "settled-unchecked" }
          })
          const b = yield* ledger.reconcile(checked.effectId, { outcome: "confirmed", by: "person" })
          expect(b).toMatchObject({ status: "confirmed", checked: true, reconciled: { source: null, taskStatus: "succeeded" } })
          const c = yield* ledger.reconcile(failed.effectId, { outcome: "failed", source: "voice", by: "person" })
          expect(c).toMatchObject({ status: "did-not-happen", mayHaveRun: false, reconciled: { outcome: "failed", taskStatus: "failed" } })

          // Once only: any other answer, and any other state, is refused with what the effect is.
          const again = yield* Effect.flip(ledger.reconcile(unchecked.effectId, { outcome: "failed", by: "person" }))
          expect(again).toMatchObject({ _tag: "EffectNotUnknown", status: "confirmed" })
          const sent = yield* ledger.record(sampleEffect())
          expect(yield* Effect.flip(ledger.reconcile(sent.effectId, { outcome: "confirmed", by: "person" })))
            .toMatchObject({ _tag: "EffectNotUnknown", status: "sent" })
          yield* ledger.answer(sent.effectId, { isError: false, output: null })
          expect(yield* Effect.flip(ledger.reconcile(sent.effectId, { outcome: "confirmed", by: "person" })))
            .toMatchObject({ _tag: "EffectNotUnknown", status: "answered" })
          expect(yield* Effect.flip(ledger.reconcile("eff_missing", { outcome: "confirmed", by: "person" })))
            .toMatchObject({ _tag: "EffectNotFound", effectId: "eff_missing" })
          // A check reported after the answer changes nothing.
          yield* ledger.markChecked(unchecked.effectId)
          expect(yield* ledger.unknownEffects).toEqual([])
          return [unchecked.effectId, failed.effectId] as const
        }))
      // What was recorded is on disk and cannot be changed, even by a direct write.
      expect(ledgerRows(dataDir, `SELECT id, status, checked, reconciled_outcome, reconciled_source, reconciled_by,
        task_status FROM effects WHERE reconciled_at IS NOT NULL ORDER BY task_id`).map((row) => Object.values(row))).toEqual([
          [ids[0], "confirmed", 0, "confirmed", "chat", "person", "settled-unchecked"],
          [expect.any(String), "confirmed", 1, "confirmed", null, "person", "succeeded"],
          [ids[1], "did-not-happen", 0, "failed", "voice", "person", "failed"]
        ])
      const raw = new Database(path.join(dataDir, "ledger.sqlite"))
      expect(() => raw.prepare("UPDATE effects SET reconciled_outcome = 'failed' WHERE id = ?").run(ids[0])).toThrow(
        /cannot be changed/
      )
      raw.close()
    }))

  it.effect("50 concurrent answers to one effect: exactly one wins", () =>
    withLedger(makeDataDir(), (ledger) =>
      Effect.gen(function*() {
        const sent = yield* ledger.record(sampleEffect())
        yield* ledger.unknown(sent.effectId, "cancelled")
        const outcomes = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) =>
            Effect.either(ledger.reconcile(sent.effectId, { outcome: i % 2 === 0 ? "confirmed" : "failed", by: "person" }))),
          { concurrency: "unbounded" }
        )
        const won = outcomes.filter((o) => o._tag === "Right")
        expect(won).toHaveLength(1)
        expect(outcomes.filter((o) => o._tag === "Left").map((o) => o.left._tag)).toEqual(Array(49).fill("EffectNotUnknown"))
        expect(Option.getOrThrow(yield* ledger.get(sent.effectId)).reconciled).toEqual(won[0]!.right.reconciled)
      })))
})

describe("an unwritable ledger", () => {
  it.effect("a ledger layer that fails answers LedgerUnavailable to every write", () =>
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const refusals = yield* Effect.all([
        Effect.flip(ledger.record(sampleEffect())),
        Effect.flip(ledger.answer("eff_1", { isError: false, output: null })),
        Effect.flip(ledger.unknown("eff_1", "timed-out")),
        Effect.flip(ledger.markChecked("eff_1")),
        Effect.flip(ledger.reconcile("eff_1", { outcome: "confirmed", by: "person" }))
      ])
      expect(refusals.every((error) => error instanceof LedgerUnavailable)).toBe(true)
      expect(yield* ledger.unknownEffects).toEqual([])
    }).pipe(Effect.provide(failingLedger)))

  it.effect("a read-only ledger file: the layer builds, every write is LedgerUnavailable, reads still answer", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const seeded = yield* withLedger(dataDir, (ledger) =>
        Effect.flatMap(ledger.record(sampleEffect()), (e) => ledger.unknown(e.effectId, "tool-failed")))
      const before = ledgerRows(dataDir)
      const restore = makeReadOnly(path.join(dataDir, "ledger.sqlite"))
      try {
        yield* withLedger(dataDir, (ledger) =>
          Effect.gen(function*() {
            const refused = yield* Effect.flip(ledger.record(sampleEffect({ taskId: "task_new" })))
            expect(refused).toBeInstanceOf(LedgerUnavailable)
            expect(refused).toMatchObject({ operation: "record", detail: expect.stringMatching(/readonly|read-only/i) })
            expect(yield* Effect.flip(ledger.reconcile(seeded.effectId, { outcome: "confirmed", by: "person" })))
              .toMatchObject({ _tag: "LedgerUnavailable", operation: "reconcile" })
            expect(yield* Effect.flip(ledger.markChecked(seeded.effectId))).toMatchObject({ _tag: "LedgerUnavailable" })
            expect((yield* ledger.unknownEffects).map((e) => e.effectId)).toEqual([seeded.effectId])
            // Writable again: the next write opens the file again, no restart needed.
            restore()
            const recorded = yield* ledger.record(sampleEffect({ taskId: "task_later" }))
            expect(recorded.status).toBe("sent")
          }))
      } finally {
        restore()
      }
      const after = ledgerRows(dataDir)
      expect(after.slice(0, before.length)).toEqual(before)
      expect(after.map((row) => row.task_id)).toEqual(["task_1", "task_later"])
    }))

  it.effect("a ledger folder that cannot be written: the layer builds, writes are refused, reads answer nothing", () =>
    Effect.gen(function*() {
      const mainDir = makeDataDir()
      const ledgerDir = makeDataDir()
      const restore = makeReadOnly(ledgerDir)
      try {
        yield* withLedger(ledgerDir, (ledger) =>
          Effect.gen(function*() {
            expect(yield* Effect.flip(ledger.record(sampleEffect()))).toMatchObject({ _tag: "LedgerUnavailable", operation: "record" })
            expect(yield* ledger.get("eff_1")).toEqual(Option.none())
            expect(yield* ledger.unknownEffects).toEqual([])
          }), mainDir)
      } finally {
        restore()
      }
      expect(fs.readdirSync(ledgerDir)).toEqual([])
    }))
})
