/** Seeding the benchmark's databases with the product's synthetic catalogue. */
import { Effect, Layer } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import { seedSynthetic } from "../../../src/marketplace/admin/Admin.js"
import { log, seconds } from "../Common.js"
import { bulkSeed } from "./BulkSeed.js"
import { int, settings } from "./Settings.js"

export type Seeder = "product" | "bulk"

/** BENCH_SEEDER, else the product's seeder up to 100,000 packages and the bulk seeder above. */
export const seederFor = (count: number): Seeder => settings.seeder ?? (count > 100_000 ? "bulk" : "product")

export const seed = async (label: string, url: string, count: number) => {
  const started = Date.now()
  let reported = 0
  const onProgress = (written: number) =>
    Effect.sync(() => {
      if (written === count || written - reported >= count / 5) {
        reported = written
        log(`  ${label}: ${int(written)} / ${int(count)} packages (${seconds(Date.now() - started)})`)
      }
    })
  if (seederFor(count) === "bulk") {
    await bulkSeed(url, count, { onProgress: (written) => Effect.runSync(onProgress(written)) })
  } else {
    const layer = SqlCatalogImporter.layer.pipe(Layer.provide(Database.layer(Database.parseDatabaseUrl(url)!)))
    await Effect.runPromise(seedSynthetic(count, onProgress).pipe(Effect.provide(layer)))
  }
  return Date.now() - started
}

/**
 * Seeds both databases (or the one given), one after the other: at once in this process, SQLite's synchronous
 * writes starved PostgreSQL's seeding and the two took longer than in turn.
 */
export const seedBoth = async (postgresUrl: string | undefined, sqliteUrl: string | undefined, count: number) => {
  log(`  ${int(count)} packages with the ${seederFor(count) === "bulk" ? "bulk seeder (BulkSeed.ts)" : "product's seeder (seedSynthetic)"}`)
  const postgres = postgresUrl === undefined ? 0 : await seed("PostgreSQL", postgresUrl, count)
  const sqlite = sqliteUrl === undefined ? 0 : await seed("SQLite", sqliteUrl, count)
  return { postgres, sqlite }
}
