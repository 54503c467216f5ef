/**
 * Bulk load of the synthetic catalogue into SQLite, through the product's own client (@effect/sql-sqlite-node,
 * whose statements are prepared once and cached): multi-row INSERTs in transactions of `transactionSize`
 * packages. The secondary indexes of the package tables are dropped first and made again from their own
 * definitions in sqlite_master at the end, and the search rows are staged in temporary tables and moved into
 * `package_terms` and `package_prefixes` in key order, one statement each: inserted as they come, they land at
 * random places in those b-trees (WITHOUT ROWID), which was most of the load's time. The rows stored are the
 * importer's.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { log, seconds } from "../Common.js"
import { type Chunk, columns, type Table, tables, type Value } from "./BulkRows.js"

/** Bound parameters per statement (SQLite's limit is 32,766), and rows per statement. */
const rowsPerStatement = (width: number) => Math.min(500, Math.floor(30_000 / width))

const insert = (sql: SqlClient.SqlClient, table: string, names: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Value>>) =>
  Effect.gen(function*() {
    const perStatement = rowsPerStatement(names.length)
    const tuple = `(${names.map(() => "?").join(", ")})`
    for (let at = 0; at < rows.length; at += perStatement) {
      const part = rows.slice(at, at + perStatement)
      // One text per row count, so the client's prepared-statement cache holds at most two per table.
      yield* sql.unsafe(
        `INSERT INTO ${table} (${names.join(", ")}) VALUES ${Array.from(part, () => tuple).join(", ")}`,
        part.flat() as Array<Value>
      )
    }
  })

/** The WITHOUT ROWID search tables, staged and moved in their key order. */
const staged: Partial<Record<Table, string>> = { package_terms: "term, tier, name", package_prefixes: "prefix, tier, name" }
const stagedTables = Object.keys(staged) as ReadonlyArray<Table>
const stage = (table: Table) => `bulk_${table}`

export const sqliteLoad = (
  sql: SqlClient.SqlClient,
  chunks: Iterator<{ readonly start: number; readonly rows: Chunk }>,
  sizes: { readonly count: number; readonly chunkSize: number; readonly transactionSize: number },
  onProgress: (written: number) => void
) =>
  Effect.gen(function*() {
    const [{ n }] = (yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM packages`) as unknown as [{ n: number }]
    if (Number(n) !== 0) return yield* Effect.die(new Error(`the bulk seeder loads an empty catalogue; this one holds ${n} packages`))
    // Checked once at the end instead of per row; the cache holds the growing b-trees.
    yield* sql`PRAGMA foreign_keys = OFF`
    yield* sql`PRAGMA cache_size = -1048576`
    const indexes = yield* sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master
      WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ${sql.in([...tables])}`
    for (const index of indexes) yield* sql.unsafe(`DROP INDEX ${index.name}`)
    for (const table of stagedTables) yield* sql.unsafe(`CREATE TEMP TABLE ${stage(table)} (${columns[table].join(", ")})`)

    for (let done = 0; done < sizes.count; done += sizes.transactionSize) {
      // Each chunk is generated inside the transaction and written at once, so memory holds one chunk.
      yield* sql.withTransaction(Effect.gen(function*() {
        for (let written = 0; written < sizes.transactionSize; written += sizes.chunkSize) {
          const chunk = chunks.next()
          if (chunk.done === true) return
          for (const table of tables) {
            const rows = chunk.value.rows[table]
            yield* insert(sql, staged[table] === undefined ? table : stage(table), columns[table], rows)
          }
        }
      }))
      onProgress(Math.min(sizes.count, done + sizes.transactionSize))
    }

    const started = Date.now()
    yield* sql.withTransaction(Effect.gen(function*() {
      for (const table of stagedTables) {
        const names = columns[table].join(", ")
        yield* sql.unsafe(`INSERT INTO ${table} (${names}) SELECT ${names} FROM ${stage(table)} ORDER BY ${staged[table]}`)
        yield* sql.unsafe(`DROP TABLE ${stage(table)}`)
      }
      for (const index of indexes) yield* sql.unsafe(index.sql)
    }))
    const broken = yield* sql`PRAGMA foreign_key_check`
    if (broken.length > 0) return yield* Effect.die(new Error(`bulk seeding broke foreign keys: ${JSON.stringify(broken.slice(0, 5))}`))
    yield* sql`PRAGMA foreign_keys = ON`
    log(`    search rows moved in key order and ${indexes.length} indexes made again in ${seconds(Date.now() - started)}`)
  })
