/**
 * The marketplace database: SQLite for a laptop, PostgreSQL in production,
 * chosen by one URL (`sqlite:PATH` or `postgres://…`). Migrations run when the
 * layer is built.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Config, ConfigError, Effect, Either, Layer, Redacted, String } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { migrate } from "./Migrations.js"

export type DatabaseUrl =
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string> }

export const defaultDatabaseUrl = "sqlite:./data/marketplace.db"

export const parseDatabaseUrl = (value: string): DatabaseUrl | undefined => {
  if (value.startsWith("sqlite:")) {
    const filename = value.slice("sqlite:".length)
    return filename.length > 0 ? { _tag: "Sqlite", filename } : undefined
  }
  if (/^postgres(?:ql)?:\/\//.test(value)) return { _tag: "Postgres", url: Redacted.make(value) }
  return undefined
}

/** `MARKETPLACE_DATABASE`: where the catalogue lives. Redacted because a URL may carry a password. */
export const DatabaseUrlConfig = Config.redacted("MARKETPLACE_DATABASE").pipe(
  Config.withDefault(Redacted.make(defaultDatabaseUrl)),
  Config.mapOrFail((redacted) => {
    const parsed = parseDatabaseUrl(Redacted.value(redacted))
    // The value itself is not repeated in the error: it may hold a password.
    return parsed
      ? Either.right(parsed)
      : Either.left(ConfigError.InvalidData(["MARKETPLACE_DATABASE"], "must be sqlite:PATH or postgres://…"))
  })
)

const names = { transformResultNames: String.snakeToCamel, transformQueryNames: String.camelToSnake }

/**
 * SQLite's page cache, in KiB when negative: 32 MiB instead of SQLite's 2 MiB. A two-word search scores each of its
 * few hundred matches through the search table's per-package index (SqlRelevance.ts, `termWeight`); with 2 MiB,
 * searches for other words in between pushed those pages out and every lookup went back to the file: 5.9 ms per
 * search rotating over five word pairs at 100,000 packages against 2.4 ms with 32 MiB (today's FTS5 `bm25` SQL
 * 2.4-2.8 ms either way). The cache grows only as pages are read.
 */
const sqlitePageCache = -32768

const sqliteClient = (filename: string) =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      if (filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
      return SqliteClient.layer({ filename, ...names })
    })
  ).pipe(
    Layer.tap((context) =>
      SqlClient.SqlClient.pipe(
        Effect.flatMap((sql) =>
          Effect.all([sql`PRAGMA foreign_keys = ON`, sql`PRAGMA busy_timeout = 5000`, sql.unsafe(`PRAGMA cache_size = ${sqlitePageCache}`)])
        ),
        Effect.provide(context),
        Effect.orDie
      )
    )
  )

/**
 * `MARKETPLACE_DATABASE_POOL`: connections to PostgreSQL per server (default 6, at most 100). More is slower here:
 * with 16 per server, 50 concurrent uncached searches on 2 cores ran PostgreSQL's backends side by side, each
 * query's CPU grew with the others' (1,048 against 1,620 req/s, p99 113 against 56 ms with 6; docs/decisions.md,
 * "The marketplace's pool").
 */
export const PoolSizeConfig = Config.integer("MARKETPLACE_DATABASE_POOL").pipe(
  Config.mapOrFail((n) =>
    n >= 1 && n <= 100
      ? Either.right(n)
      : Either.left(ConfigError.InvalidData(["MARKETPLACE_DATABASE_POOL"], "must be a whole number from 1 to 100"))
  ),
  Config.withDefault(6)
)

/**
 * The pool is built here, not by PgClient.layer, to set session options: JIT
 * compilation costs ~100 ms on queries over its cost threshold (category
 * counts) and never pays off for short catalogue reads.
 *
 * Connections the pool has opened stay open (`min`), where pg-pool closed any
 * idle for 10 s: a burst after a quiet moment then paid for new backends, and
 * each new connection plans the search functions again on their first calls
 * (migration 0015), at the head of that burst's queue.
 */
const pgClient = (url: Redacted.Redacted<string>) =>
  Layer.unwrapEffect(Effect.map(PoolSizeConfig, (poolSize) => pgPool(url, poolSize)))

const pgPool = (url: Redacted.Redacted<string>, poolSize: number) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          connectionString: Redacted.value(url),
          max: poolSize,
          min: poolSize,
          application_name: "clark-marketplace",
          options: "-c jit=off"
        })
        // An idle connection that dies is dropped by the pool; unhandled, the event would end the process.
        pool.on("error", () => {})
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    ),
    ...names
  })

/** A connected client, without running migrations. */
export const client = (url: DatabaseUrl): Layer.Layer<SqlClient.SqlClient> =>
  url._tag === "Sqlite" ? Layer.orDie(sqliteClient(url.filename)) : Layer.orDie(pgClient(url.url))

/** A connected, migrated database. */
export const layer = (url: DatabaseUrl): Layer.Layer<SqlClient.SqlClient> =>
  Layer.effectDiscard(Effect.orDie(migrate)).pipe(Layer.provideMerge(client(url)))

export const layerConfig: Layer.Layer<SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.map(Effect.orDie(DatabaseUrlConfig), layer)
)
