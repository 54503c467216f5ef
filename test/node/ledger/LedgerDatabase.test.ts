/**
 * The ledger's file as the ledger opens it (layers/node/ledger/LedgerDatabase.ts and LedgerClient.ts), on real
 * SQLite files: the held handle commits with `synchronous = FULL`; a write on it while a transaction is open waits
 * for that transaction instead of joining it; the WAL is checkpointed by a worker thread once enough writes were
 * made, the ledger's connection no longer checkpointing inside a record's commit, every checkpointed page in the
 * database file; a file opened again inside an uninterruptible region (a write's retry, as a package call's hold
 * runs it) closes again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Schedule, Scope } from "effect"
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

  it.live("the worker checkpoints the WAL once enough writes were made: the ledger's commits no longer checkpoint", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const scope = yield* Scope.make()
      const ledger = yield* open(dataDir, scope, { checkpoints: { first: 20, every: 30 } })
      expect(yield* pragma(ledger, "wal_autocheckpoint")).toBe(1000)
      const write = (i: number) => Effect.orDie(ledger.write(insert, [`eff_${i}`, "1970-01-01T00:00:00.000Z"]))
      for (let i = 0; i < 19; i++) yield* write(i)
      // Few writes, no thread.
      expect(yield* ledger.checkpoints.started).toBe(false)
      yield* write(19)
      // The 20th write asked the worker (without waiting for it): once it answered, the connection leaves it the work.
      yield* pragma(ledger, "wal_autocheckpoint").pipe(
        Effect.repeat({ until: (pages) => pages === 0, schedule: Schedule.spaced("20 millis") }),
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "the worker never answered" })
      )
      expect(yield* ledger.checkpoints.started).toBe(true)
      expect(yield* pragma(ledger, "synchronous")).toBe(2)
      for (let i = 20; i < 50; i++) yield* write(i)
      const done = yield* ledger.checkpoints.checkpoint
      expect(done.walPages).toBeGreaterThan(0)
      expect(done.checkpointed).toBe(done.walPages)
      // Every row is in the database file itself: a copy of it without its WAL holds them all.
      const copy = path.join(makeDataDir(), "copy.sqlite")
      fs.copyFileSync(ledgerFile(dataDir), copy)
      expect(idsOnDisk(dataDir, copy)).toHaveLength(50)
      // Closing the file ends the worker with it.
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.either(ledger.checkpoints.checkpoint)).toMatchObject({ _tag: "Left" })
    }))

  it.live("a write refused inside an uninterruptible region reopens the file there and still closes it (no hang)", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      yield* withLedger(dataDir, (ledger) => ledger.record(sampleEffect()))
      const restore = makeReadOnly(ledgerFile(dataDir))
      try {
        // The refused write closes its file and opens it again (with its checkpoint loop) inside this region; the
        // second refusal closes that one too, which waits for the loop: it must be interruptible.
        const refused = yield* withLedger(dataDir, (ledger) => Effect.uninterruptible(Effect.flip(ledger.record(sampleEffect()))))
        expect(refused).toBeInstanceOf(LedgerUnavailable)
      } finally {
        restore()
      }
    }), 20_000)
})
