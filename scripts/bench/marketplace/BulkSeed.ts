/**
 * The bulk seeder: the synthetic catalogue `seedSynthetic` writes, loaded without the importer's per-chunk
 * upserts. The taxonomy and the statistics go through the product itself (`importDocument`,
 * `refreshStatistics`, as in `seedSynthetic`); the packages' rows come from BulkRows.ts and are shipped with COPY
 * on PostgreSQL (BulkPostgres.ts) or with prepared multi-row INSERTs through the product's own SQLite client
 * (BulkSqlite.ts), in transactions of 100,000 packages (one transaction for the whole load would grow the
 * write-ahead log to the size of the database before its first checkpoint).
 *
 * test/bench/BulkSeed.test.ts checks, on both databases, that it stores what `seedSynthetic` stores.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { importDocument } from "../../../src/marketplace/admin/Admin.js"
import { syntheticTaxonomy } from "../../../src/marketplace/seed/Synthetic.js"
import { openBulk } from "./BulkPostgres.js"
import { chunkRows, columns } from "./BulkRows.js"
import { sqliteLoad } from "./BulkSqlite.js"


export interface BulkOptions {
  /** Told the number of packages written so far, after each chunk (PostgreSQL) or transaction (SQLite). */
  readonly onProgress?: (written: number) => void
  /** The generator's `now` and the packages' `created_at`; by default the time the seeding starts. */
  readonly now?: Date
  /** Packages generated and shipped at a time. */
  readonly chunkSize?: number
  /** Packages per SQLite transaction, a multiple of chunkSize. */
  readonly transactionSize?: number
}

/**
 * Seeds `count` synthetic packages into a migrated-on-open, empty catalogue at `url` (sqlite:PATH or
 * postgres://…). The same catalogue as `seedSynthetic(count)`.
 */
export const bulkSeed = async (url: string, count: number, settings: BulkOptions = {}) => {
  const { chunkSize = 5_000, onProgress = () => {}, transactionSize = 100_000 } = settings
  const parsed = Database.parseDatabaseUrl(url)
  if (parsed === undefined) throw new Error(`not a database URL: ${url}`)
  const runtime = ManagedRuntime.make(SqlCatalogImporter.layer.pipe(Layer.provideMerge(Database.layer(parsed))))
  try {
    const now = settings.now ?? new Date()
    const publisherIds = await runtime.runPromise(Effect.gen(function*() {
      yield* importDocument({ ...syntheticTaxonomy(), packages: [] })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql.withoutTransforms()<{ id: unknown; slug: unknown }>`SELECT id, slug FROM publishers`
      return new Map(rows.map((row) => [String(row.slug), Number(row.id)]))
    }).pipe(Effect.orDie))
    const options = { dialect: parsed._tag === "Postgres" ? "pg" as const : "sqlite" as const, publisherIds, timestamp: now.toISOString(), now }

    const chunks = function*() {
      let ids = { packageId: 1, versionId: 1 }
      for (let start = 0; start < count; start += chunkSize) {
        const { next, rows } = chunkRows(start, Math.min(chunkSize, count - start), ids, options)
        ids = next
        yield { start, rows }
      }
    }

    if (parsed._tag === "Postgres") {
      const bulk = await openBulk(url)
      try {
        // The next chunk is generated here while PostgreSQL takes in the last one.
        let inFlight: Promise<void> = Promise.resolve()
        for (const { rows, start } of chunks()) {
          await inFlight
          inFlight = bulk.write(rows, columns).then(() => onProgress(start + rows.packages.length))
        }
        await inFlight
      } finally {
        await bulk.finish()
      }
    } else {
      await runtime.runPromise(Effect.gen(function*() {
        const sql = (yield* SqlClient.SqlClient).withoutTransforms()
        yield* sqliteLoad(sql, chunks(), { count, chunkSize, transactionSize }, onProgress)
      }).pipe(Effect.orDie))
    }

    await runtime.runPromise(Effect.flatMap(CatalogImporter, (importer) => importer.refreshStatistics))
  } finally {
    await runtime.dispose()
  }
}
