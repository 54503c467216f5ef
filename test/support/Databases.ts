/**
 * Real databases for tests: a SQLite file in a temporary directory, and a
 * fresh PostgreSQL database per suite (created and dropped here). PostgreSQL
 * is never skipped: a test that cannot reach it fails.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { type DatabaseUrl, parseDatabaseUrl } from "../../layers/marketplace/sql/Database.js"

/** Administrative connection used to create and drop test databases. */
export const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

export interface TestDatabase {
  readonly name: "sqlite" | "postgres"
  readonly url: string
  readonly parsed: DatabaseUrl
  readonly drop: () => Promise<void>
}

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

export const postgresDatabase = async (): Promise<TestDatabase> => {
  const database = `clark_test_${randomBytes(6).toString("hex")}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${database}`)
  } finally {
    await admin.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
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

export const makeDatabase = (name: "sqlite" | "postgres"): Promise<TestDatabase> =>
  name === "sqlite" ? Promise.resolve(sqliteDatabase()) : postgresDatabase()

export const dialects = ["sqlite", "postgres"] as const
