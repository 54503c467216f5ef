/**
 * The benchmark's bulk seeder (scripts/bench/marketplace/BulkSeed.ts) stores what the product's `seedSynthetic`
 * stores, on both databases: every row of every catalogue table (the search table included), the identity
 * counters, the full-text index's answers, and on PostgreSQL the same keys, indexes and foreign keys.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Layer, ManagedRuntime } from "effect"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../layers/marketplace/sql/SqlCatalogImporter.js"
import { bulkSeed } from "../../scripts/bench/marketplace/BulkSeed.js"
import { seedSynthetic } from "../../src/marketplace/admin/Admin.js"
import { dialects, makeDatabase, type TestDatabase } from "../support/Databases.js"

const count = 1_234
const now = new Date("2026-11-25T12:34:56.789Z")

/** The real clock but for the time it reads: both seeders then draw the same dates. */
const fixedClock = (ms: number): Clock.Clock => {
  const real = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => ms,
    currentTimeMillis: Effect.succeed(ms),
    unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    sleep: (duration: Duration.Duration) => real.sleep(duration)
  }
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** Everything the two seeders should agree on, as plain rows. */
const snapshot = (db: TestDatabase) => {
  const runtime = ManagedRuntime.make(Database.client(db.parsed))
  return runtime.runPromise(Effect.gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const pg = db.name === "postgres"
    const all = (text: string) => sql.unsafe<Record<string, unknown>>(text)
    const out: Record<string, unknown> = {
      categories: yield* all(`SELECT * FROM categories ORDER BY slug`),
      // created_at is the importer's clock when the taxonomy went in.
      publishers: yield* all(`SELECT id, slug, name, verified FROM publishers ORDER BY id`),
      packages: yield* all(`SELECT * ${pg ? ", search_vector::text AS search_text" : ""} FROM packages ORDER BY id`),
      terms: yield* all(`SELECT * FROM package_terms ORDER BY term, tier, name`),
      prefixes: yield* all(`SELECT * FROM package_prefixes ORDER BY prefix, tier, name`),
      versions: yield* all(`SELECT * FROM package_versions ORDER BY id`),
      facets: yield* all(`SELECT * FROM package_facets ORDER BY package_id, kind, isolation`),
      platforms: yield* all(`SELECT * FROM package_platforms ORDER BY package_id, platform`)
    }
    if (pg) {
      out.sequences = yield* all(`SELECT pg_sequence_last_value(pg_get_serial_sequence('packages', 'id')) AS packages,
        pg_sequence_last_value(pg_get_serial_sequence('package_versions', 'id')) AS versions`)
      out.indexes = yield* all(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
        ORDER BY tablename, indexname`)
      out.constraints = yield* all(`SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) AS d
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`)
      out.match = yield* all(`SELECT id FROM packages WHERE search_vector @@ to_tsquery('simple', 'cal:*') ORDER BY id`)
    } else {
      out.sequences = yield* all(`SELECT * FROM sqlite_sequence ORDER BY name`)
      out.schema = yield* all(`SELECT type, name, sql FROM sqlite_master ORDER BY name`)
      // The FTS5 index agrees with its content table, and answers alike.
      yield* sql`INSERT INTO packages_fts (packages_fts) VALUES ('integrity-check')`
      out.match = yield* all(`SELECT rowid FROM packages_fts WHERE packages_fts MATCH '"cal"*' ORDER BY rowid`)
    }
    return out
  }).pipe(Effect.ensuring(Effect.promise(() => runtime.dispose()))))
}

describe.each(dialects)("bulk seeder on %s", (dialect) => {
  it("stores what seedSynthetic stores", async () => {
    // The product seeder's database is migrated (a template copy); the bulk seeder migrates its own on open.
    const product = await makeDatabase(dialect, { migrated: true })
    const bulk = await makeDatabase(dialect)
    cleanups.push(product.drop, bulk.drop)

    const layer = SqlCatalogImporter.layer.pipe(Layer.provide(Database.layer(product.parsed)))
    const written = await Effect.runPromise(
      seedSynthetic(count).pipe(Effect.provide(layer), Effect.withClock(fixedClock(now.getTime())))
    )
    expect(written).toBe(count)
    const progress: Array<number> = []
    // Small chunks and transactions, so that several of each are written.
    await bulkSeed(bulk.url, count, { now, chunkSize: 200, transactionSize: 600, onProgress: (n) => progress.push(n) })
    expect(progress.at(-1)).toBe(count)

    const [expected, actual] = [await snapshot(product), await snapshot(bulk)]
    expect((expected.packages as Array<unknown>).length).toBe(count)
    expect((expected.terms as Array<unknown>).length).toBeGreaterThan(count * 10)
    expect((expected.prefixes as Array<unknown>).length).toBeGreaterThan(count * 10)
    expect((expected.match as Array<unknown>).length).toBeGreaterThan(0)
    for (const key of Object.keys(expected)) expect({ [key]: actual[key] }).toEqual({ [key]: expected[key] })
  })
})
