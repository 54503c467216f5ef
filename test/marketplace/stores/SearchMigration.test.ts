/**
 * Migrations 0008 and 0009 on a database that already holds packages: their search rows (words, 3-letter
 * prefixes) are written, so one-word search finds and ranks them right after the upgrade, on both databases.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Migrator, SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import { migrate } from "../../../layers/marketplace/sql/Migrations.js"
import { prefixesOfPackage, termsOfPackage } from "../../../layers/marketplace/sql/SearchTerms.js"
import catalog from "../../../layers/marketplace/sql/migrations/0001_catalog.js"
import accounts from "../../../layers/marketplace/sql/migrations/0002_accounts.js"
import curation from "../../../layers/marketplace/sql/migrations/0003_curation.js"
import catalogVersion from "../../../layers/marketplace/sql/migrations/0004_catalog_version.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects, makeDatabase } from "../../support/Databases.js"

/** The schema as it was before the search table. */
const migrateBefore = Migrator.make({})({
  loader: Migrator.fromRecord({
    "0001_catalog": catalog,
    "0002_accounts": accounts,
    "0003_curation": curation,
    "0004_catalog_version": catalogVersion
  }),
  table: "clark_migrations"
})

const rows = [
  ["zephyr-core", "Core", [], "Blocks", "listed"],
  ["breeze", "Zephyr Breeze", [], "Soft", "featured"],
  ["gale", "Gale", ["zephyr"], "Gusts", "listed"],
  ["calm", "Calm", [], "The zephyr of spring", "listed"],
  ["secret", "Zephyr Secret", [], "", "hidden"],
  ["other", "Other", [], "Nothing", "listed"]
] as const

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

describe.each(dialects)("migration 0008 on %s", (dialect) => {
  it("writes the search rows of the packages already stored", async () => {
    const db = await makeDatabase(dialect)
    const runtime = ManagedRuntime.make(SqlPackageStore.layer.pipe(Layer.provideMerge(Database.client(db.parsed))))
    cleanups.push(async () => {
      await runtime.dispose()
      await db.drop()
    })
    const found = await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrateBefore
      for (const [name, displayName, keywords, description, status] of rows) {
        yield* sql`INSERT INTO packages ${
          sql.insert({
            name,
            displayName,
            description,
            keywords: JSON.stringify(keywords),
            keywordsText: keywords.join(" "),
            curationStatus: status,
            latestPublishedAt: "2024-01-01T00:00:00.000Z",
            createdAt: "2024-01-01T00:00:00.000Z",
            updatedAt: "2024-01-01T00:00:00.000Z"
          })
        }`
      }
      const applied = yield* migrate
      const store = yield* PackageStore
      const slice = yield* store.find({ terms: ["zeph"], ordering: "relevance", statuses: publicStatuses, limit: 10 })
      const prefix = yield* store.find({ terms: ["zep"], ordering: "relevance", statuses: publicStatuses, limit: 10 })
      const [count] = yield* sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM package_terms`
      const prefixes = yield* sql<{ prefix: string; tier: unknown; name: string }>`SELECT prefix, tier, name FROM package_prefixes
        ORDER BY name, prefix`
      return {
        applied: applied.map(([id, name]) => `${id}_${name}`),
        names: slice.items.map((item) => item.name),
        prefixNames: prefix.items.map((item) => item.name),
        rows: Number(count?.n),
        prefixes: prefixes.map((row) => [row.name, row.prefix, Number(row.tier)])
      }
    }).pipe(Effect.orDie))
    // Later migrations (other work) may run here too.
    expect(found.applied).toContain("8_search_terms")
    expect(found.names).toEqual(["zephyr-core", "breeze", "gale", "calm"])
    // zephyr, core, blocks; zephyr, breeze, soft; gale, zephyr, gusts; calm, the, zephyr, of, spring; zephyr, secret; other, nothing
    expect(found.rows).toEqual(3 + 3 + 3 + 5 + 2 + 2)
    // Migration 0009 writes the 3-letter prefixes of those words (words shorter than 3 have none), each at its
    // best tier, just as the importer does (SearchTerms.ts prefixesOfPackage).
    expect(found.applied).toContain("9_search_prefixes")
    expect(found.prefixNames).toEqual(found.names)
    const expected = rows.flatMap(([name, displayName, keywords, description]) =>
      prefixesOfPackage(termsOfPackage({ name, displayName, keywords, description })).map(({ prefix, tier }) => [name, prefix, tier])
    ).sort((a, b) => (`${a[0]}\n${a[1]}` < `${b[0]}\n${b[1]}` ? -1 : 1))
    expect(found.prefixes).toEqual(expected)
    expect(found.prefixes).toContainEqual(["calm", "zep", 4])
    expect(found.prefixes).not.toContainEqual(expect.arrayContaining(["of"]))
  })
})
