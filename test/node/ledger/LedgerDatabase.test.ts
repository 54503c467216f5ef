/**
 * The ledger's file as the ledger opens it (layers/node/ledger/LedgerDatabase.ts and LedgerClient.ts), on real
 * SQLite files: the held handle commits with `synchronous = FULL`; a write on it while a transaction is open waits
 * for that transaction instead of joining it; the WAL is checkpointed on the handle by a settling write (an answer)
 * or past a ceiling, never by SQLite inside a record's commit (docs/decisions.md, "The ledger record's tail"); a file
 * opened again inside an uninterruptible region (a write's retry, as a package call's hold runs it) closes again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ledgerFile, type Opened, open } from "../../../layers/node/ledger/LedgerDatabase.js"
import { LedgerUnavailable } from "../../../services/node/LedgerErrors.js"
import { makeReadOnly, sampleEffect, withLedger } from "../../support/Ledgers.js"
import { Database } from "../../support/NodeFixtures.js"
import { makeDataDir } from "../../support/NodeServer.js"

const insert = `INSERT INTO effects (id, task_id, package_id, package_digest, tool, risk, origin, input, summary, status,
  may_have_run, recorded_at) VALUES (?, 'task_1', 'pkg', 'sha256:x', 'add_note', 'local-write', 'person', '{}', 's', 'sent', 1, ?)`

const opened = (dataDir: string, options?: Parameters<typeof open>[2]) =>
  Effect.flatMap(Effect.scope, (scope) => open(dataDir, scope, options))

const pragma = (ledger: Opened, name: string) =>
  Effect.map(Effect.orDie(ledger.client.unsafe<Record<string, number>>(`PRAGMA ${name}`)), (rows) => Object.values(rows[0]!)[0])

/** The ids in the ledger file as another connection (another process) sees them. */
const idsOnDisk = (dataDir: string, file = ledgerFile(dataDir)) => {
  const db = new Database(file)
  try {
    return db.prepare("SELECT id FROM effects ORDER BY rowid").all().map((row: any) => row.id as string)
  } finally {
    db.close()
  }
}

describe("the ledger's file", () => {
  it.scoped("a write on the held handle is committed with synchronous = FULL when it returns", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const ledger = yield* opened(dataDir)
      expect(yield* pragma(ledger, "synchronous")).toBe(2)
      expect(yield* pragma(ledger, "journal_mode")).toBe("wal")
      yield* Effect.orDie(ledger.write(insert, ["eff_1", "1970-01-01T00:00:00.000Z"]))
      expect(idsOnDisk(dataDir)).toEqual(["eff_1"])
    }))

  it.scoped("a write while a transaction is open waits for it and is not undone with it", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const ledger = yield* opened(dataDir)
      const inside = yield* Deferred.make<void>()
      const end = yield* Deferred.make<void>()
      const transaction = yield* Effect.gen(function*() {
        yield* Effect.orDie(ledger.client.unsafe(insert, ["eff_rolled_back", "1970-01-01T00:00:00.000Z"]))
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(end)
        return yield* Effect.fail("undone")
      }).pipe(ledger.client.withTransaction, Effect.fork)
      yield* Deferred.await(inside)
      const write = yield* Effect.fork(Effect.orDie(ledger.write(insert, ["eff_own", "1970-01-01T00:00:00.000Z"])))
      yield* Effect.yieldNow({ priority: 1 })
      // Still waiting: it would otherwise have run inside the open transaction, and be rolled back with it.
      expect(write.unsafePoll()).toBeNull()
      expect(idsOnDisk(dataDir)).toEqual([])
      yield* Deferred.succeed(end, undefined)
      expect(Exit.isFailure(yield* Fiber.await(transaction))).toBe(true)
      yield* Fiber.join(write)
      expect(idsOnDisk(dataDir)).toEqual(["eff_own"])
    }))

  it.live("the WAL is checkpointed by a settling write (an answer), a record only past the ceiling; FULL kept", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const scope = yield* Scope.make()
      const ledger = yield* open(dataDir, scope, { checkpoints: { settleAfter: 10, ceiling: 40 } })
      // SQLite's own checkpoint is off: none runs inside a record's commit.
      expect(yield* pragma(ledger, "wal_autocheckpoint")).toBe(0)
      expect(yield* pragma(ledger, "synchronous")).toBe(2)
      const at = "1970-01-01T00:00:00.000Z"
      let next = 0
      const record = () => Effect.orDie(ledger.write(insert, [`eff_${next++}`, at]))
      const settle = () => Effect.orDie(ledger.write(`UPDATE effects SET status = 'answered' WHERE id = ?`, [`eff_${next - 1}`], true))
      /** What a copy of the database file without its WAL holds: the rows of the last checkpoint. */
      const inFile = () => {
        const copy = path.join(makeDataDir(), "copy.sqlite")
        fs.copyFileSync(ledgerFile(dataDir), copy)
        // Before the first checkpoint even the table is only in the WAL.
        const db = new Database(copy)
        const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'effects'").all()[0].n
        db.close()
        return tables === 0 ? 0 : idsOnDisk(dataDir, copy).length
      }
      // Records alone, up to the ceiling: no checkpoint, every row only in the WAL.
      for (let i = 0; i < 40; i++) yield* record()
      expect(ledger.sinceCheckpoint()).toBe(40)
      expect(inFile()).toBe(0)
      // The write that meets the ceiling, a record too, checkpoints first: the 40 rows reach the file.
      yield* record()
      expect(ledger.sinceCheckpoint()).toBe(1)
      expect(inFile()).toBe(40)
      // Past `settleAfter` a record still does not checkpoint; the next settling write does, before its own commit.
      for (let i = 0; i < 12; i++) yield* record()
      expect(ledger.sinceCheckpoint()).toBe(13)
      expect(inFile()).toBe(40)
      yield* settle()
      expect(ledger.sinceCheckpoint()).toBe(1)
      expect(inFile()).toBe(53)
      // Below `settleAfter` a settling write is a plain write.
      yield* settle()
      expect(ledger.sinceCheckpoint()).toBe(2)
      // `settle` alone (an unknown effect's, whose write goes through the client) checkpoints once due.
      for (let i = 0; i < 8; i++) yield* record()
      yield* ledger.settle
      expect(ledger.sinceCheckpoint()).toBe(0)
      expect(inFile()).toBe(61)
      // Whatever is still in the WAL reaches the file when it closes (SQLite checkpoints at close).
      yield* Scope.close(scope, Exit.void)
      expect(idsOnDisk(dataDir)).toHaveLength(61)
    }))

  it.live("a write refused inside an uninterruptible region reopens the file there and still closes it (no hang)", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      yield* withLedger(dataDir, (ledger) => ledger.record(sampleEffect()))
      const restore = makeReadOnly(ledgerFile(dataDir))
      try {
        // The refused write closes its file and opens it again inside this region; the second refusal closes that
        // one too, which must not wait on anything uninterruptible.
        const refused = yield* withLedger(dataDir, (ledger) => Effect.uninterruptible(Effect.flip(ledger.record(sampleEffect()))))
        expect(refused).toBeInstanceOf(LedgerUnavailable)
      } finally {
        restore()
      }
    }), 20_000)
})
