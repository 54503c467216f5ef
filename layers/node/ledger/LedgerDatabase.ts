/**
 * The ledger's own SQLite file, `<dataDir>/ledger.sqlite`: WAL with `synchronous = FULL`, so a record is on
 * disk when its commit returns (the node's main database runs `NORMAL` for turn speed, which may lose the last
 * commits at a power loss: a ledger record may not). Its own client, never provided as the `SqlClient` tag, so
 * it cannot be mistaken for the main database. Opening never fails the node: a file that cannot be opened or
 * migrated answers `LedgerUnavailable`, and the next write tries again.
 *
 * Its checkpoints run on the ledger's own connection, synchronously, but never inside a record: SQLite's automatic
 * checkpoint (inside whichever commit takes the WAL past 1,000 pages, a record half the time, and the WAL's restart
 * fsync on the write after it) is off, and an answer or an unknown effect, written after its call went out,
 * checkpoints first once enough writes are in the WAL (LedgerClient.ts, `Checkpoints`). A checkpoint on a worker
 * thread was tried and measured worse (its copy and fsyncs ran beside every record made meanwhile); see
 * docs/decisions.md, "The ledger record's own path" and "The ledger record's tail".
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Cause, Effect, ExecutionStrategy, Exit, Scope, String } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { LedgerUnavailable } from "../../../services/node/LedgerErrors.js"
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
  /** Closing it closes the file. */
  readonly scope: Scope.CloseableScope
}

export interface OpenOptions {
  /** `NORMAL` only for the benchmark's baseline: the ledger itself always commits with `FULL`. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /** When the WAL is checkpointed (tests); `LedgerClient.defaultCheckpoints` otherwise. */
  readonly checkpoints?: LedgerClient.Checkpoints | undefined
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
        const opened = yield* Scope.extend(LedgerClient.make(ledgerFile(dataDir), options.checkpoints), scope)
        const client = opened.client
        yield* client`PRAGMA journal_mode = WAL`
        yield* client`PRAGMA synchronous = ${client.literal(options.synchronous ?? "FULL")}`
        yield* client`PRAGMA busy_timeout = 5000`
        // Checkpoints at the ledger's own moments instead (LedgerClient.ts, `Checkpoints`).
        yield* client`PRAGMA wal_autocheckpoint = 0`
        yield* Migrator.make({})({ loader, table: "ledger_migrations" }).pipe(using(client))
        return opened
      }).pipe(Effect.catchAllDefect(Effect.fail))
    )
    if (Exit.isSuccess(exit)) return { ...exit.value, scope }
    yield* Scope.close(scope, exit)
    return yield* new LedgerUnavailable({ operation: "record", detail: describe(exit.cause) })
  })
