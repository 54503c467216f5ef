/**
 * The ledger's `SqlClient` over one better-sqlite3 handle that the ledger also holds itself.
 *
 * `@effect/sql-sqlite-node`'s client keeps its handle to itself, and each statement through it pays for the
 * fragment compile, a `sql.execute` span with its attributes, a scope, the transaction permit and a lookup in an
 * Effect `Cache` (its clock, hash map and deferred) before the driver runs: about half of a ledger record's own
 * time once the fsync is left out (docs/decisions.md, "The ledger record's own path"). Here the same `SqlClient`
 * (migrations, reads, the rare writes, transactions) runs on a connection of ours, and `write` runs one statement
 * of constant text on the held handle straight away: prepared once, kept in a plain map, no span of its own (the
 * ledger's operation span covers it). A second handle on the same file is no way out: a write waiting on its lock
 * while the other handle's transaction is open would block the event loop (better-sqlite3 is synchronous) and so
 * the very transaction it waits for.
 *
 * `write` honours transactions as the client's permit does: a statement issued while a transaction is open on the
 * handle (between its BEGIN and COMMIT, which may span other fibers' turns) goes through the client and waits for
 * the transaction's permit instead of joining it; otherwise it runs at once, as its own autocommit transaction
 * (the driver is synchronous, so no other fiber runs meanwhile).
 *
 * The WAL's checkpoints are this handle's too (`Checkpoints`): run before a settling write's statement, so that a
 * record, which the call waits on before it is sent, pays its own commit's fsync and nothing else.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient, SqlError, Statement } from "@effect/sql"
import type { Connection } from "@effect/sql/SqlConnection"
import { Effect, Scope, Stream, String } from "effect"
import { createRequire } from "node:module"

/** The driver's prepared statement, as far as the ledger uses it (better-sqlite3 ships no types here). */
interface Prepared {
  readonly reader: boolean
  run(...params: ReadonlyArray<unknown>): unknown
  all(...params: ReadonlyArray<unknown>): Array<unknown>
  raw(on: boolean): Prepared
}

/** The driver's database handle, as far as the ledger uses it. */
export interface Handle {
  readonly inTransaction: boolean
  prepare(text: string): Prepared
  close(): void
}

type Driver = new(filename: string) => Handle
let driver: Driver | undefined
/** Loaded on first use, as `@effect/sql-sqlite-node` itself loads it (a native module, external to the bundle). */
const Database = (): Driver => (driver ??= createRequire(import.meta.url)("better-sqlite3") as Driver)

/** Statements kept prepared: the ledger's texts are constant (parameters bound), so this bound is never reached in use. */
const preparedLimit = 128

/**
 * When the WAL is copied back into the database file. SQLite's automatic checkpoint is off on the held handle
 * (LedgerDatabase.ts): a write marked `settle` (an answer, which comes after its call went out) checkpoints first
 * once `settleAfter` writes were made since the last checkpoint, so that it, not the next record, also pays the
 * WAL's restart; any write checkpoints first past `ceiling`, so a ledger that records and is never answered still
 * keeps its WAL bounded.
 */
export interface Checkpoints {
  readonly settleAfter: number
  readonly ceiling: number
}

/**
 * A record writes about 3.5 WAL pages (row, primary key, the `effects_waiting` index), its answer about 3: an answer
 * checkpoints about every 150 calls, near SQLite's own 1,000 pages (so a call pays a checkpoint as often as before,
 * at its answer). The ceiling leaves room for 100 calls in flight between a record and its answer, and no more: until
 * its first checkpoint after an open the WAL grows, and a commit that grows the file costs its fsync more (about
 * 0.05-0.08 ms here) than one written over the WAL's old pages.
 */
export const defaultCheckpoints: Checkpoints = { settleAfter: 300, ceiling: 400 }

export interface LedgerClient {
  readonly client: SqlClient.SqlClient
  /**
   * Runs one statement of constant text (a write) on the held handle; see the module's comment for transactions.
   * `settle`: the write may checkpoint the WAL first (`Checkpoints`); a record never does below the ceiling.
   */
  readonly write: (text: string, params: ReadonlyArray<unknown>, settle?: boolean) => Effect.Effect<void, SqlError.SqlError>
  /** Checkpoints now if a settling write would (`Checkpoints`): for a settling write made through `client`. */
  readonly settle: Effect.Effect<void>
  /** Writes on the held handle since its last checkpoint (for tests). */
  readonly sinceCheckpoint: () => number
}

const failure = (message: string) => (cause: unknown) => new SqlError.SqlError({ cause, message })

/** Opens `filename` (a defect when the driver cannot) and closes it with `scope`. */
export const make = (filename: string, checkpoints: Checkpoints = defaultCheckpoints): Effect.Effect<LedgerClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(Effect.sync(() => new (Database())(filename)), (db) => Effect.sync(() => db.close()))
    const statements = new Map<string, Prepared>()
    const prepared = (text: string): Prepared => {
      let statement = statements.get(text)
      if (statement === undefined) {
        if (statements.size >= preparedLimit) statements.clear()
        statement = db.prepare(text)
        statements.set(text, statement)
      }
      return statement
    }
    const rows = (statement: Prepared, params: ReadonlyArray<unknown>): ReadonlyArray<any> => {
      if (statement.reader) return statement.all(...params)
      statement.run(...params)
      return []
    }
    const execute = (statement: () => Prepared, params: ReadonlyArray<unknown>, transform: ((rows: ReadonlyArray<any>) => ReadonlyArray<any>) | undefined) =>
      Effect.try({
        try: () => (transform === undefined ? rows(statement(), params) : transform(rows(statement(), params))),
        catch: failure("Failed to execute statement")
      })
    const connection: Connection = {
      execute: (text, params, transform) => execute(() => prepared(text), params, transform),
      executeRaw: (text, params) =>
        Effect.try({
          try: () => {
            const statement = prepared(text)
            return statement.reader ? statement.all(...params) : statement.run(...params)
          },
          catch: failure("Failed to execute statement")
        }),
      executeValues: (text, params) =>
        Effect.try({
          try: () => {
            const statement = prepared(text)
            if (!statement.reader) return (statement.run(...params), [])
            try {
              return statement.raw(true).all(...params) as ReadonlyArray<ReadonlyArray<unknown>>
            } finally {
              statement.raw(false)
            }
          },
          catch: failure("Failed to execute statement")
        }),
      executeUnprepared: (text, params, transform) => execute(() => db.prepare(text), params, transform),
      executeStream: () => Stream.dieMessage("the ledger's client does not stream")
    }

    // One permit, as @effect/sql-sqlite-node's client: a statement outside a transaction waits while one is open.
    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(restore(semaphore.take(1)), Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))),
        connection
      )
    )
    const client = yield* SqlClient.make({
      acquirer,
      transactionAcquirer,
      compiler: Statement.makeCompilerSqlite(String.camelToSnake),
      transformRows: Statement.defaultTransforms(String.snakeToCamel).array,
      spanAttributes: [["db.system.name", "sqlite"]]
    }).pipe(Effect.provide(Reactivity.layer))

    // A plain counter: it is read and set only inside the synchronous body of a write, where no other fiber runs.
    let since = 0
    const checkpoint = () => {
      // PASSIVE: the handle is the file's only writer, so it copies the whole WAL; the next commit restarts it.
      prepared("PRAGMA wal_checkpoint(PASSIVE)").all()
      since = 0
    }
    const checkpointIfDue = (settle: boolean) => {
      if (since >= checkpoints.ceiling || (settle && since >= checkpoints.settleAfter)) {
        // A checkpoint that fails leaves the WAL as it was and is tried again at the next due write; the write's
        // own statement says whether the file can be written.
        try {
          checkpoint()
        } catch {
          // Nothing: see above.
        }
      }
    }
    const run = (text: string, params: ReadonlyArray<unknown>, settle: boolean) => {
      checkpointIfDue(settle)
      prepared(text).run(...params)
      since++
    }
    const write = (text: string, params: ReadonlyArray<unknown>, settle = false): Effect.Effect<void, SqlError.SqlError> =>
      Effect.suspend(() =>
        db.inTransaction
          ? Effect.asVoid(client.unsafe(text, params))
          : Effect.try({ try: () => run(text, params, settle), catch: failure("Failed to execute statement") })
      )
    const settle = Effect.sync(() => {
      // Never inside a transaction open on the handle (a reconcile's): its own pages are not even committed.
      if (!db.inTransaction) checkpointIfDue(true)
    })
    return { client, write, settle, sinceCheckpoint: () => since }
  })
