/**
 * Real databases for tests: a SQLite file in a temporary directory, and a
 * fresh PostgreSQL database per suite (created and dropped here). PostgreSQL
 * is never skipped: a test that cannot reach it fails.
 *
 * `{ migrated: true }` gives a database the marketplace's migrations have already run on, copied from a template
 * migrated once (a PostgreSQL `CREATE DATABASE … TEMPLATE`, a copy of a SQLite file): running the migrations on
 * every test database took 1-2 s each on PostgreSQL, ~0.3 s on SQLite. The copy is the migrated database itself
 * (schema, `clark_migrations` rows); a test about the migrations themselves asks for an empty one (the default).
 */
import { Effect, ManagedRuntime } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { type DatabaseUrl, layer as migratedLayer, parseDatabaseUrl } from "../../layers/marketplace/sql/Database.js"

/** Administrative connection used to create and drop test databases. */
export const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface TestDatabase {
  readonly name: "sqlite" | "postgres"
  readonly url: string
  readonly parsed: DatabaseUrl
  readonly drop: () => Promise<void>
}

export interface DatabaseOptions {
  /** The marketplace's migrations already run (copied from a template); an empty database otherwise. */
  readonly migrated?: boolean
}

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../layers/marketplace/sql")

/** The files under `dir`, every level, sorted. */
const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name)).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]
  )

/**
 * Names the migration set (every file of the SQL layer, which the migrations import from), so a template is never
 * used for another one: other checkouts share the server.
 */
const migrationSetHash = () => {
  const hash = createHash("sha256")
  for (const file of filesUnder(migrationsDir)) hash.update(file.slice(migrationsDir.length)).update(fs.readFileSync(file))
  return hash.digest("hex").slice(0, 16)
}

/** Runs the marketplace's migrations on `url`, as `Database.layer` does when a server starts. */
const runMigrations = async (url: string) => {
  const runtime = ManagedRuntime.make(migratedLayer(parseDatabaseUrl(url)!))
  try {
    await runtime.runPromise(Effect.void)
  } finally {
    await runtime.dispose()
  }
}

let sqliteTemplate: Promise<string> | undefined

/** A migrated SQLite file of this process, made on first use. */
const migratedSqliteFile = () =>
  (sqliteTemplate ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-test-template-"))
    const file = path.join(dir, "marketplace.db")
    await runMigrations(`sqlite:${file}`)
    // Closed: everything is in the main file (no -wal or -shm left beside it).
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }))
    return file
  })())

export const sqliteDatabase = (): TestDatabase => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-test-"))
  const url = `sqlite:${path.join(dir, "marketplace.db")}`
  return {
    name: "sqlite",
    url,
    parsed: parseDatabaseUrl(url)!,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

const migratedSqliteDatabase = async (): Promise<TestDatabase> => {
  const template = await migratedSqliteFile()
  const db = sqliteDatabase()
  fs.copyFileSync(template, db.url.slice("sqlite:".length))
  return db
}

const databaseUrl = (database: string) => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

let postgresTemplate: Promise<string> | undefined

/**
 * The migrated template database of this migration set, made once for every process and checkout: under an
 * advisory lock, built under another name and renamed when complete, so a half-built one is never copied.
 */
const migratedPostgresTemplate = () =>
  (postgresTemplate ??= (async () => {
    const template = `clark_test_template_${migrationSetHash()}`
    const building = `${template}_building`
    const admin = new pg.Client({ connectionString: adminUrl })
    await admin.connect()
    try {
      await admin.query("SELECT pg_advisory_lock(hashtext('clark_test_template'))")
      const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [template])
      if (found.rowCount === 0) {
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
        await admin.query(`CREATE DATABASE ${building}`)
        await runMigrations(databaseUrl(building))
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`)
      }
    } finally {
      await admin.end()
    }
    return template
  })())

export const postgresDatabase = async (options: DatabaseOptions = {}): Promise<TestDatabase> => {
  const database = `clark_test_${randomBytes(6).toString("hex")}`
  const template = options.migrated === true ? await migratedPostgresTemplate() : undefined
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${database}${template === undefined ? "" : ` TEMPLATE ${template}`}`)
  } finally {
    await admin.end()
  }
  const url = new URL(databaseUrl(database))
  return {
    name: "postgres",
    url: url.toString(),
    parsed: parseDatabaseUrl(url.toString())!,
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    }
  }
}

export const makeDatabase = (name: "sqlite" | "postgres", options: DatabaseOptions = {}): Promise<TestDatabase> =>
  name === "sqlite"
    ? options.migrated === true ? migratedSqliteDatabase() : Promise.resolve(sqliteDatabase())
    : postgresDatabase(options)

export const dialects = ["sqlite", "postgres"] as const
