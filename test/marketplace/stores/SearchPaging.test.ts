/**
 * Relevance paging while the catalogue grows: a client walking the pages of a search must see every package
 * that was there when it started exactly once, whatever is imported between its pages, on both databases.
 * (On SQLite the rank used to be bm25, whose value moves with the corpus statistics, so a cursor holding the
 * last score resumed in the wrong place: items repeated.)
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { ImportDocument, type ImportDocumentInput } from "../../../schema/marketplace/Import.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { type Keyset, type PackageSlice, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects, makeDatabase } from "../../support/Databases.js"

type PackageInput = NonNullable<ImportDocumentInput["packages"]>[number]

const pkg = (name: string, displayName: string, description: string, keywords: Array<string> = []): PackageInput => ({
  name,
  displayName,
  description,
  keywords,
  curationStatus: "listed",
  versions: [{ version: "1.0.0", publishedAt: "2024-01-01T00:00:00Z", indexedAt: "2024-01-01T00:00:00Z", registryIntegrity: "sha512-x" }]
})

/** The word in every field, texts of different lengths, so that any length- or frequency-based rank differs. */
const initial: ReadonlyArray<PackageInput> = [
  pkg("zephyr-core", "Core", "Blocks"),
  pkg("zephyr-extra-long-name", "Extra", "More blocks of many kinds for many uses"),
  pkg("breeze", "Zephyr Breeze", "Soft wind animations"),
  pkg("breeze-pro", "Zephyr Breeze Pro Edition", "Soft wind animations, more of them"),
  pkg("gale", "Gale", "Strong gusts", ["zephyr", "wind"]),
  pkg("gust", "Gust", "Gusts", ["zephyr"]),
  pkg("calm", "Calm", "Inspired by the zephyr wind of spring"),
  pkg("still", "Still", "A zephyr wind"),
  pkg("quiet", "Quiet", "Zephyr wind, and a long description that goes on and on about the wind"),
  // Packages without the words, so that the words start rare (bm25 clamps the weight of a word most rows hold).
  ...Array.from({ length: 30 }, (_, i) => pkg(`other-${i}`, "Other", "Something else entirely"))
]

/** Many packages with the words, which move bm25's document frequencies and average lengths a lot. */
const arrivals: ReadonlyArray<PackageInput> = Array.from({ length: 40 }, (_, i) =>
  pkg(
    `arrival-${String(i).padStart(2, "0")}`,
    i % 4 === 0 ? "Zephyr Wind Arrival" : "Arrival",
    `zephyr zephyr wind ${"filler ".repeat(i % 7)}`,
    i % 3 === 0 ? ["zephyr", "wind"] : []
  ))

const decode = Schema.decodeUnknownSync(ImportDocument)

const layer = (db: Awaited<ReturnType<typeof makeDatabase>>) =>
  Layer.mergeAll(SqlPackageStore.layer, SqlCatalogImporter.layer).pipe(Layer.provideMerge(Database.layer(db.parsed)))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

const open = async (dialect: "sqlite" | "postgres") => {
  const db = await makeDatabase(dialect, { migrated: true })
  const runtime = ManagedRuntime.make(layer(db))
  cleanups.push(async () => {
    await runtime.dispose()
    await db.drop()
  })
  return runtime
}

const importPackages = (packages: ReadonlyArray<PackageInput>) =>
  Effect.flatMap(CatalogImporter, (importer) => importer.load(decode({ packages })))

const page = (terms: ReadonlyArray<string>, after: Keyset | undefined) =>
  Effect.flatMap(PackageStore, (store) =>
    store.find({ terms, ordering: "relevance", statuses: publicStatuses, limit: 2, after }))

describe.each(dialects)("relevance paging on %s while packages are imported between pages", (dialect) => {
  it.each([["one word", ["zephyr"]], ["a prefix", ["zeph"]], ["two words", ["zephyr", "wind"]]] as const)(
    "%s: every package present at the start appears exactly once",
    async (_, terms) => {
      const runtime = await open(dialect)
      await runtime.runPromise(importPackages(initial))
      const before = await runtime.runPromise(
        Effect.flatMap(PackageStore, (store) =>
          store.find({ terms, ordering: "relevance", statuses: publicStatuses, limit: 100 }))
      )
      const expected = before.items.map((item) => item.name)
      expect(expected.length).toBeGreaterThan(4)

      const seen: Array<string> = []
      let after: Keyset | undefined = undefined
      let imported = 0
      for (let round = 0; round < 100; round++) {
        const slice: PackageSlice = await runtime.runPromise(page(terms, after))
        seen.push(...slice.items.map((item) => item.name))
        if (slice.next === undefined) break
        after = slice.next
        // A batch of new matching packages after each of the first pages.
        if (imported < arrivals.length) {
          await runtime.runPromise(importPackages(arrivals.slice(imported, imported + 10)))
          imported += 10
        }
      }
      const repeated = seen.filter((name, i) => seen.indexOf(name) !== i)
      expect(repeated).toEqual([])
      // The original packages keep their relative order and none is skipped.
      expect(seen.filter((name) => expected.includes(name))).toEqual(expected)
    }
  )
})
