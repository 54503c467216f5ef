/**
 * PostgreSQL's catalogue version (migrations 0004 and 0014): an indexing write bumps it exactly once, as its last
 * statement, so a concurrent writer does not wait on the version row for the whole transaction; every other write
 * still bumps it per statement.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import pg from "pg"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlIndexedCatalog from "../../../layers/marketplace/sql/SqlIndexedCatalog.js"
import { ImportVersion } from "../../../schema/marketplace/Import.js"
import { IndexedCatalog } from "../../../services/marketplace/IndexedCatalog.js"
import { postgresDatabase, type TestDatabase } from "../../support/Databases.js"

let database: TestDatabase
let runtime: ManagedRuntime.ManagedRuntime<IndexedCatalog | SqlClient.SqlClient, never>

beforeAll(async () => {
  database = await postgresDatabase()
  const sql = Database.layer(database.parsed)
  runtime = ManagedRuntime.make(
    SqlIndexedCatalog.layer.pipe(Layer.provide(SqlCatalogImporter.layer), Layer.provideMerge(sql))
  )
  await runtime.runPromise(Effect.void)
})
afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

const connect = async () => {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  return client
}

const version = async (client: pg.Client) =>
  Number((await client.query<{ version: string }>("SELECT version FROM catalog_version WHERE id = 1")).rows[0]!.version)

/** Whether another connection can take the version row right now (NOWAIT: an error instead of a wait). */
const rowFree = async () => {
  const other = await connect()
  try {
    await other.query("BEGIN")
    await other.query("SELECT version FROM catalog_version WHERE id = 1 FOR UPDATE NOWAIT")
    return true
  } catch (error) {
    if ((error as { code?: string }).code === "55P03") return false
    throw error
  } finally {
    await other.query("ROLLBACK").catch(() => undefined)
    await other.end()
  }
}

const entry = (name: string, v: string) => ({
  name,
  displayName: name,
  description: "A package indexed in a test",
  keywords: [],
  homepage: null,
  repositoryUrl: null,
  license: "MIT",
  initialStatus: "listed" as const,
  version: Schema.decodeUnknownSync(ImportVersion)({
    version: v,
    publishedAt: "2026-11-01T00:00:00.000Z",
    indexedAt: "2026-11-02T00:00:00.000Z",
    registryIntegrity: `sha512-${Buffer.alloc(64, v.length).toString("base64")}`
  })
})

describe("the catalogue version on PostgreSQL", () => {
  it("moves exactly once for an indexing write, and the package is there", async () => {
    const client = await connect()
    try {
      const before = await version(client)
      await runtime.runPromise(Effect.flatMap(IndexedCatalog, (catalog) => catalog.write(entry("bump-once", "1.0.0"))))
      expect(await version(client)).toBe(before + 1)
      const rows = await client.query("SELECT name FROM packages WHERE name = 'bump-once'")
      expect(rows.rowCount).toBe(1)
    } finally {
      await client.end()
    }
  })

  it("a deferred transaction leaves the row free until it bumps; an ordinary write holds it from its first statement", async () => {
    const writer = await connect()
    try {
      const before = await version(writer)
      await writer.query("BEGIN")
      await writer.query("SELECT set_config('clark.catalog_bump', 'deferred', true)")
      await writer.query("INSERT INTO categories (slug, name, description, position) VALUES ('deferred-one', 'Deferred', '', 90)")
      expect(await rowFree()).toBe(true)
      await writer.query("UPDATE catalog_version SET version = version + 1 WHERE id = 1")
      expect(await rowFree()).toBe(false)
      await writer.query("COMMIT")
      expect(await version(writer)).toBe(before + 1)

      await writer.query("BEGIN")
      await writer.query("INSERT INTO categories (slug, name, description, position) VALUES ('ordinary-one', 'Ordinary', '', 91)")
      expect(await rowFree()).toBe(false)
      await writer.query("COMMIT")
      expect(await version(writer)).toBe(before + 2)
    } finally {
      await writer.end()
    }
  })
})
