/**
 * The ledger's own SQLite file, `<dataDir>/ledger.sqlite`: WAL with `synchronous = FULL`, so a record is on
 * disk when its commit returns (the node's main database runs `NORMAL` for turn speed, which may lose the last
 * commits at a power loss: a ledger record may not). Its own client, never provided as the `SqlClient` tag, so
 * it cannot be mistaken for the main database. Opening never fails the node: a file that cannot be opened or
 * migrated answers `LedgerUnavailable`, and the next write tries again.
 *
 * Its checkpoints run on a worker thread (layers/node/sql/WalCheckpoints.ts' worker, as for the main database):
 * SQLite's automatic checkpoint would otherwise run inside the commit of every ~300th write, copying the WAL back and
 * fsyncing the database file on the event loop while that record waits (the record's p99 tail). They are asked for
 * by count of writes, not by time: the first write after a complete checkpoint restarts the WAL, which with
 * `synchronous = FULL` costs that write a second fsync (of the WAL's header), so a checkpoint every 250 ms (the main
 * database's cadence) would double the fsyncs of every record of a node that records now and then. One per
 * `every` writes (about 14 KiB of WAL each, so ~14 MB at most) leaves that second fsync to one write in a thousand.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Cause, Effect, ExecutionStrategy, Exit, Scope, String } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { LedgerUnavailable } from "../../../services/node/LedgerErrors.js"
import * as WalCheckpoints from "../sql/WalCheckpoints.js"
import * as LedgerClient from "./LedgerClient.js"
import effects from "./migrations/0001_effects.js"

export const ledgerFile = (dataDir: string) => path.join(dataDir, "ledger.sqlite")

const loader = Migrator.fromRecord({ "0001_effects": effects })

/** The database's own words, without a stack: for the log and `LedgerUnavailable.detail`, never a response. */
export const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const inner = error instanceof Error && "cause" in error && error.cause instanceof Error ? error.cause : error
  return inner instanceof Error ? `${inner.name}: ${inner.message}` : String.isString(inner) ? inner : "unknown failure"
}

/** Runs `effect` against the ledger's client (its own, not the context's `SqlClient`). */
export const using = (client: SqlClient.SqlClient) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, SqlClient.SqlClient>> =>
  Effect.provideService(effect, SqlClient.SqlClient, client)

export interface Opened extends LedgerClient.LedgerClient {
  /** Closing it closes the file (and its checkpoint worker). */
  readonly scope: Scope.CloseableScope
  /** The worker's checkpoints of this file (`write` asks for them; `checkpoint` runs one now). */
  readonly checkpoints: Effect.Effect.Success<ReturnType<typeof WalCheckpoints.make>>
}

/** When the worker is asked for a checkpoint: after `first` writes, then every `every` writes. */
export interface CheckpointCount {
  /**
   * Below SQLite's own 1,000 pages (about 290 writes): the worker's first answer turns the automatic checkpoint
   * off before it ever runs inside a commit. Default 200.
   */
  readonly first?: number | undefined
  /** Default 1,000. */
  readonly every?: number | undefined
}

export interface OpenOptions {
  /** `NORMAL` only for the benchmark's baseline: the ledger itself always commits with `FULL`. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  readonly checkpoints?: CheckpointCount | undefined
}

/**
 * `write`, asking the worker for a checkpoint when the count is reached: forked into the file's scope, so the write
 * does not wait for it (the worker thread does the work); interruptible, so closing the file never waits on it.
 */
const counted = (
  write: LedgerClient.LedgerClient["write"],
  checkpoint: Effect.Effect<WalCheckpoints.Checkpoint, string>,
  scope: Scope.Scope,
  count: CheckpointCount = {}
): LedgerClient.LedgerClient["write"] => {
  const first = count.first ?? 200
  const every = count.every ?? 1000
  let writes = 0
  let due = first
  const ask = checkpoint.pipe(
    Effect.catchAll((why) => Effect.logWarning(`The ledger's WAL checkpoint on the worker failed: ${why}`)),
    Effect.interruptible,
    Effect.forkIn(scope)
  )
  return (text, params) =>
    Effect.flatMap(write(text, params), () => {
      if (++writes < due) return Effect.void
      due = writes + every
      return Effect.asVoid(ask)
    })
}

/**
 * Opens and migrates the ledger in a scope of its own under `parent`: closed again when anything fails, so a
 * failed attempt leaves no file handle behind.
 */
export const open = (
  dataDir: string,
  parent: Scope.Scope,
  options: OpenOptions = {}
): Effect.Effect<Opened, LedgerUnavailable> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    const exit = yield* Effect.exit(
      Effect.gen(function*() {
        yield* Effect.sync(() => fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }))
        // The driver opens the file while the client is made and throws (a defect) when it cannot.
        const opened = yield* Scope.extend(LedgerClient.make(ledgerFile(dataDir)), scope)
        const client = opened.client
        yield* client`PRAGMA journal_mode = WAL`
        yield* client`PRAGMA synchronous = ${client.literal(options.synchronous ?? "FULL")}`
        yield* client`PRAGMA busy_timeout = 5000`
        yield* Migrator.make({})({ loader, table: "ledger_migrations" }).pipe(using(client))
        const checkpoints = yield* WalCheckpoints.make({ filename: ledgerFile(dataDir) }).pipe(using(client), Scope.extend(scope))
        return { ...opened, checkpoints, write: counted(opened.write, checkpoints.checkpoint, scope, options.checkpoints) }
      }).pipe(Effect.catchAllDefect(Effect.fail))
    )
    if (Exit.isSuccess(exit)) return { ...exit.value, scope }
    yield* Scope.close(scope, exit)
    return yield* new LedgerUnavailable({ operation: "record", detail: describe(exit.cause) })
  })
