/**
 * Bulk load of the synthetic catalogue into PostgreSQL with COPY FROM STDIN, through the `pg` driver that
 * @effect/sql-pg uses. @effect/sql-pg has no COPY, and `pg` only hands a query the connection when the server
 * asks for the copy data: `CopyIn` below answers with the rows (pg-copy-streams does the same, as a stream).
 *
 * The package tables' keys, indexes and foreign keys are dropped first and rebuilt from their own definitions
 * (pg_get_constraintdef / pg_get_indexdef) after the load: inserted one by one into a 16-million-row search
 * table, the b-tree pages are read and split at random, which was most of the product seeder's 45 minutes.
 * Rebuilt foreign keys check every row, so a reference the rows got wrong fails here. The stored rows are the
 * importer's; the rebuilt indexes are packed tighter than an index grown by imports (docs/benchmarks.md says so).
 */
import pg from "pg"
import { log, seconds } from "../Common.js"
import { type Chunk, type Table, tables, type TableRows, type Value } from "./BulkRows.js"

interface CopyConnection {
  readonly sendCopyFromChunk: (chunk: Buffer) => void
  readonly endCopyFrom: () => void
}

/** COPY … FROM STDIN with its data in hand: the server's CopyInResponse is answered with `data`. */
class CopyIn extends pg.Query {
  constructor(text: string, private readonly data: Buffer) {
    super(text)
  }

  handleCopyInResponse(connection: CopyConnection) {
    const slice = 1 << 16
    for (let at = 0; at < this.data.length; at += slice) connection.sendCopyFromChunk(this.data.subarray(at, at + slice))
    connection.endCopyFrom()
  }
}

const escapes: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" }

/** One field in COPY's text format. */
const field = (value: Value): string =>
  value === null
    ? "\\N"
    : typeof value === "boolean"
    ? (value ? "t" : "f")
    : typeof value === "number"
    ? String(value)
    : value.replace(/[\\\t\n\r]/g, (c) => escapes[c]!)

const copyText = (rows: TableRows) => {
  const lines: Array<string> = []
  for (const row of rows) lines.push(row.map(field).join("\t"))
  lines.push("")
  return lines.join("\n")
}

export const copyRows = (client: pg.Client, table: Table, names: ReadonlyArray<string>, rows: TableRows) =>
  rows.length === 0 ? Promise.resolve() : new Promise<void>((resolve, reject) => {
    const query = new CopyIn(`COPY ${table} (${names.join(", ")}) FROM STDIN`, Buffer.from(copyText(rows)))
    query.on("end", () => resolve())
    query.on("error", reject)
    void client.query(query)
  })

interface Definition {
  readonly table: string
  readonly name: string
  readonly sql: string
}

/**
 * Keys, unique constraints and foreign keys on the package tables or pointing at them, then the other indexes
 * of those tables, with the statements that make them again.
 */
const definitions = async (client: pg.Client) => {
  const names = [...tables]
  const constraints = await client.query<{ table: string; name: string; type: string; definition: string }>(
    `SELECT c.conrelid::regclass::text AS table, c.conname AS name, c.contype AS type,
       pg_get_constraintdef(c.oid) AS definition
     FROM pg_constraint c
     WHERE c.contype IN ('p', 'u', 'f')
       AND (c.conrelid::regclass::text = ANY ($1) OR (c.contype = 'f' AND c.confrelid::regclass::text = ANY ($1)))`,
    [names]
  )
  const indexes = await client.query<{ table: string; name: string; definition: string }>(
    `SELECT i.tablename AS table, i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename = ANY ($1)
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.indexname))::regclass
         AND c.contype IN ('p', 'u'))`,
    [names]
  )
  const constraint = (type: string) =>
    constraints.rows.filter((c) => c.type === type).map((c): Definition => ({
      table: c.table,
      name: c.name,
      sql: `ALTER TABLE ${c.table} ADD CONSTRAINT ${c.name} ${c.definition}`
    }))
  return {
    keys: [...constraint("p"), ...constraint("u")],
    foreign: constraint("f"),
    indexes: indexes.rows.map((i): Definition => ({ table: i.table, name: i.name, sql: i.definition }))
  }
}

export interface BulkTarget {
  readonly client: pg.Client
  /** Loads one chunk of rows. */
  readonly write: (rows: Chunk, names: Record<Table, ReadonlyArray<string>>) => Promise<void>
  /** Rebuilds keys, indexes and foreign keys and moves the identity sequences past the loaded ids. */
  readonly finish: () => Promise<void>
}

/** Opens the database (already migrated, taxonomy imported, no packages yet) for a bulk load. */
export const openBulk = async (url: string): Promise<BulkTarget> => {
  const client = new pg.Client({ connectionString: url, application_name: "clark-bench-seed" })
  await client.connect()
  const [{ n }] = (await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM packages")).rows as [{ n: string }]
  if (Number(n) !== 0) throw new Error(`the bulk seeder loads an empty catalogue; this one holds ${n} packages`)
  // The index rebuilds sort 16 million search rows: in memory rather than in temporary files.
  await client.query("SET maintenance_work_mem = '1GB'")
  const defs = await definitions(client)
  for (const d of defs.foreign) await client.query(`ALTER TABLE ${d.table} DROP CONSTRAINT ${d.name}`)
  for (const d of defs.indexes) await client.query(`DROP INDEX ${d.name}`)
  for (const d of defs.keys) await client.query(`ALTER TABLE ${d.table} DROP CONSTRAINT ${d.name}`)
  return {
    client,
    write: async (rows, names) => {
      for (const table of tables) await copyRows(client, table, names[table], rows[table])
    },
    finish: async () => {
      try {
        const started = Date.now()
        for (const d of [...defs.keys, ...defs.indexes, ...defs.foreign]) await client.query(d.sql)
        for (const table of ["packages", "package_versions"]) {
          await client.query(
            `SELECT setval(pg_get_serial_sequence('${table}', 'id'), MAX(id)) FROM ${table} HAVING MAX(id) IS NOT NULL`
          )
        }
        log(`    keys, ${defs.indexes.length} indexes and foreign keys rebuilt in ${seconds(Date.now() - started)}`)
      } finally {
        await client.end()
      }
    }
  }
}
