/**
 * Checkpoints of the node database's WAL on a worker thread, off the event loop.
 *
 * SQLite's automatic checkpoint runs inside the commit that takes the WAL past 1,000 pages, on the committing
 * connection. better-sqlite3 is synchronous, so that is the event loop: the checkpoint copies the WAL back into the
 * database and fsyncs it (10-50 ms on this host when loaded), and every request of the node waits. A widget press
 * writes about 18 WAL pages over its commits, so one press in about 55 paid a whole checkpoint: on a busy disk, the
 * press's p99 was that pause (docs/decisions.md, "Widget presses: one read, and the WAL checkpoint off the event loop").
 *
 * Here a worker thread holds its own connection to the same file and runs a PASSIVE checkpoint when asked (every
 * `interval` of real time, once the WAL has grown past `startAtBytes`: a node that writes little starts no thread);
 * a PASSIVE checkpoint takes no lock a writer needs, so commits on the main connection go on while it copies and
 * fsyncs. The main connection's automatic checkpoint is turned off only once the worker has answered its first
 * checkpoint, and turned back on if the worker fails or exits, so the WAL never grows without bound. Durability is
 * unchanged: a commit is as durable as before (WAL, `synchronous = NORMAL`); only the moment its pages are copied
 * into the database file moves.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Deferred, Duration, Effect, Layer, Option, Ref, Runtime, Schedule, Scope, SynchronizedRef } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

/** SQLite's own default, restored when the worker cannot checkpoint. */
const automaticPages = 1000

/** The worker's program (CommonJS, evaluated): one connection, a PASSIVE checkpoint per message, closed on `close`. */
const program = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true })
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close()
    parentPort.close()
    return
  }
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)")
    parentPort.postMessage({ busy: row.busy, walPages: row.log, checkpointed: row.checkpointed })
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) })
  }
})
`

/** What one checkpoint did: the WAL's pages, how many are now in the database, whether a lock held it back. */
export interface Checkpoint {
  readonly busy: number
  readonly walPages: number
  readonly checkpointed: number
}

type Reply = Checkpoint | { readonly error: string }

export interface Options {
  readonly filename: string
  /**
   * How often the WAL is looked at, and checkpointed by the worker once it runs (default 1 s). Not more often: after
   * a complete checkpoint the next commit on the main connection starts the WAL over and fsyncs its header, on the
   * event loop, so each checkpoint costs one commit an fsync; four a second fell on more than one press in a hundred at
   * the benchmark's rate of presses, which is where a p99 is made.
   */
  readonly interval?: Duration.DurationInput | undefined
  /**
   * The WAL size at which the worker is started (default 1 MiB, a quarter of where SQLite checkpoints by itself): a
   * node that writes little (most test nodes) never starts a thread.
   */
  readonly startAtBytes?: number | undefined
}

export const defaultInterval = Duration.seconds(1)
export const defaultStartAtBytes = 1024 * 1024

/** The worker, started in `scope`: one checkpoint per request, the replies in the order of the requests. */
const startWorker = (options: Options, sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3")
    const waiting: Array<Deferred.Deferred<Checkpoint, string>> = []
    let closing = false
    let exited = false
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() => new Worker(program, { eval: true, workerData: { driver, filename: options.filename } })),
      (worker) =>
        Effect.async<void>((resume) => {
          closing = true
          if (exited) return resume(Effect.void)
          // A plain timer, not the Clock: a test's TestClock would never end the wait.
          const timer = setTimeout(() => void worker.terminate(), 5_000)
          worker.once("exit", () => {
            clearTimeout(timer)
            resume(Effect.void)
          })
          worker.postMessage("close")
        })
    )
    const off = yield* Ref.make(false)
    /** The main connection checkpoints by itself again: the worker is gone or failing. */
    const fallBack = Effect.flatMap(Ref.getAndSet(off, false), (was) =>
      was ? Effect.ignore(sql.unsafe(`PRAGMA wal_autocheckpoint = ${automaticPages}`)) : Effect.void)
    const settle = (reply: Reply | string) => {
      const next = waiting.shift()
      if (next === undefined) return
      Deferred.unsafeDone(
        next,
        typeof reply === "string" ? Effect.fail(reply) : "error" in reply ? Effect.fail(reply.error) : Effect.succeed(reply)
      )
    }
    const runtime = yield* Effect.runtime<never>()
    const failed = (why: string) => {
      while (waiting.length > 0) settle(why)
      // Event handlers run outside any fiber: the fall-back runs on the layer's runtime.
      if (!closing) Runtime.runFork(runtime)(fallBack)
    }
    worker.on("message", (reply: Reply) => settle(reply))
    worker.on("error", (error) => failed(`the checkpoint worker failed: ${error.message}`))
    worker.on("exit", () => {
      exited = true
      failed("the checkpoint worker exited")
    })
    const checkpoint: Effect.Effect<Checkpoint, string> = Effect.flatMap(Deferred.make<Checkpoint, string>(), (reply) => {
      if (closing || exited) return Effect.fail("the checkpoint worker is closing or gone")
      waiting.push(reply)
      worker.postMessage("checkpoint")
      return Deferred.await(reply)
    }).pipe(
      Effect.tap(() =>
        Effect.flatMap(Ref.getAndSet(off, true), (was) =>
          // The first answer shows the worker can checkpoint: from now on the main connection leaves it the work.
          was ? Effect.void : Effect.orDie(sql`PRAGMA wal_autocheckpoint = 0`))),
      Effect.tapError(() => fallBack)
    )
    return checkpoint
  })

/**
 * Answers `tick` (what the schedule runs: looks at the WAL, starts the worker once the WAL is large enough, and
 * checkpoints once it runs) and `checkpoint` (one checkpoint now, starting the worker if needed). The worker lives
 * in the current scope.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const started = yield* SynchronizedRef.make<Option.Option<Effect.Effect<Checkpoint, string>>>(Option.none())
    const worker = SynchronizedRef.modifyEffect(started, (current) =>
      Option.match(current, {
        onSome: (checkpoint) => Effect.succeed([checkpoint, current] as const),
        onNone: () => Effect.map(Scope.extend(startWorker(options, sql), scope), (checkpoint) => [checkpoint, Option.some(checkpoint)] as const)
      }))
    const walBytes = Effect.sync(() => {
      try {
        return fs.statSync(`${options.filename}-wal`).size
      } catch {
        return 0
      }
    })
    const checkpoint = Effect.flatMap(worker, (run) => run)
    const tick = Effect.gen(function*() {
      const running = Option.isSome(yield* SynchronizedRef.get(started))
      if (!running && (yield* walBytes) < (options.startAtBytes ?? defaultStartAtBytes)) return Option.none<Checkpoint>()
      return Option.some(yield* checkpoint)
    })
    return { checkpoint, tick, started: Effect.map(SynchronizedRef.get(started), Option.isSome) }
  })

/**
 * The checkpoints of `options.filename` (the context's `SqlClient` is its main connection) on a worker, looked at
 * every `interval` of real time for as long as the current scope lives. A checkpoint that fails leaves the main
 * connection checkpointing by itself and is tried again later. Answers what `make` answers.
 */
export const run = (options: Options) =>
  Effect.gen(function*() {
    const checkpoints = yield* make(options)
    yield* checkpoints.tick.pipe(
      Effect.catchAll((why) => Effect.as(Effect.logWarning(`WAL checkpoint on the worker failed: ${why}`), Option.none())),
      Effect.repeat(Schedule.spaced(options.interval ?? defaultInterval)),
      // Real time, not the node's Clock: the cadence is the disk's business, and a test's TestClock moved by a day
      // would otherwise run 345,600 ticks.
      Effect.withClock(Clock.make()),
      // Interruptible whatever the caller's region: a fiber forked where interruption is off (the ledger opens its
      // file inside a write, which may run uninterruptibly) would inherit that, and closing the scope would wait
      // for it for ever.
      Effect.interruptible,
      Effect.forkScoped
    )
    return checkpoints
  })

/** The node database's checkpoints on a worker, for as long as the layer lives (`run`). */
export const layer = (options: Options): Layer.Layer<never, never, SqlClient.SqlClient> => Layer.scopedDiscard(run(options))
