/**
 * One-word relevance over the search table on both databases: a prefix that several words share (each
 * package once, at its best field), a prefix shared by more words than are walked one by one, and 3-letter
 * words, answered from the prefix table (migration 0009) exactly as the word walk answers them. On PostgreSQL a
 * public search (curation status its only filter) reads its page through a function (migration 0015) and any other
 * filter through a statement: both give the same pages.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { ImportDocument, type ImportDocumentInput } from "../../../schema/marketplace/Import.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { type Keyset, type PackageQuery, type PackageSlice, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects, makeDatabase, type TestDatabase } from "../../support/Databases.js"

type PackageInput = NonNullable<ImportDocumentInput["packages"]>[number]

const pkg = (name: string, fields: Partial<PackageInput> = {}): PackageInput => ({
  name,
  displayName: "Plain",
  description: "",
  curationStatus: "listed",
  // Every package in one category: filtering by it changes no answer, only the way it is read.
  categorySlug: "tools",
  versions: [{ version: "1.0.0", publishedAt: "2024-01-01T00:00:00Z", indexedAt: "2024-01-01T00:00:00Z", registryIntegrity: "sha512-x" }],
  ...fields
})

const packages: ReadonlyArray<PackageInput> = [
  // "alph" starts alpha, alphabet, alphanumeric and alphas.
  pkg("alpha-tool", { description: "Alphabet soup" }),
  pkg("beta", { displayName: "Alphanumeric Beta" }),
  pkg("gamma", { keywords: ["alphabet"] }),
  pkg("epsilon", { description: "Alphabet and alphas" }),
  pkg("delta", { description: "About alpha" }),
  pkg("hidden-alpha", { curationStatus: "hidden" }),
  // "zq" starts 60 words, more than are walked one by one.
  ...Array.from({ length: 60 }, (_, i) => pkg(`many-${String(59 - i).padStart(2, "0")}`, { description: `zq${i}x` })),
  pkg("zqa-named", { description: "zq7x" }),
  pkg("named", { displayName: "Zqb" })
]

const alph = ["alpha-tool", "beta", "gamma", "delta", "epsilon"]
const zq = ["zqa-named", "named", ...Array.from({ length: 60 }, (_, i) => `many-${String(i).padStart(2, "0")}`)]

describe.each(dialects)("one-word relevance on %s", (dialect) => {
  let db: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<PackageStore | CatalogImporter, never>
  /** The store as it searched before the prefix table: every word starting with a 3-letter term walked. */
  let wordWalk: ManagedRuntime.ManagedRuntime<PackageStore, never>
  beforeAll(async () => {
    db = await makeDatabase(dialect, { migrated: true })
    runtime = ManagedRuntime.make(
      Layer.mergeAll(SqlPackageStore.layer, SqlCatalogImporter.layer).pipe(Layer.provide(Database.layer(db.parsed)))
    )
    await runtime.runPromise(
      Effect.flatMap(CatalogImporter, (importer) =>
        importer.load(Schema.decodeUnknownSync(ImportDocument)({
          categories: [{ slug: "tools", name: "Tools", position: 0 }],
          packages
        })))
    )
    wordWalk = ManagedRuntime.make(
      Layer.effect(PackageStore, SqlPackageStore.makeWith({ prefixTable: false })).pipe(Layer.provide(Database.layer(db.parsed)))
    )
  })
  afterAll(async () => {
    await wordWalk.dispose()
    await runtime.dispose()
    await db.drop()
  })

  const walkPages = (
    terms: ReadonlyArray<string>,
    limit: number,
    extra: Partial<PackageQuery> = {},
    on: ManagedRuntime.ManagedRuntime<PackageStore, never> = runtime
  ) =>
    on.runPromise(Effect.gen(function*() {
      const store = yield* PackageStore
      const seen: Array<string> = []
      let after: Keyset | undefined = undefined
      for (let i = 0; i < 200; i++) {
        const slice: PackageSlice = yield* store.find({ terms, ordering: "relevance", statuses: publicStatuses, limit, after, ...extra })
        seen.push(...slice.items.map((item) => item.name))
        if (slice.next === undefined) break
        after = slice.next
      }
      return seen
    }))

  it.each([1, 2, 3, 100])("a prefix of several words: each package once, at its best field (pages of %i)", async (limit) => {
    expect(await walkPages(["alph"], limit)).toEqual(alph)
  })

  it("a whole word finds only the packages holding a word that starts with it", async () => {
    expect(await walkPages(["alphabet"], 100)).toEqual(["gamma", "alpha-tool", "epsilon"])
  })

  it.each([1, 7, 100])("a prefix of more words than are walked (pages of %i)", async (limit) => {
    expect(await walkPages(["zq"], limit)).toEqual(zq)
  })

  it.each([["alph"], ["zq"]])("other statuses filter the %s walk", async (term) => {
    expect(await walkPages([term], 3, { statuses: ["hidden"] })).toEqual(term === "alph" ? ["hidden-alpha"] : [])
  })

  it.each([1, 2, 3, 100])("a 3-letter prefix of several words: each package once, at its best field (pages of %i)", async (limit) => {
    expect(await walkPages(["alp"], limit)).toEqual(alph)
  })

  it.each([1, 4, 100])("a 3-letter prefix of eleven words, one tier, by name (pages of %i)", async (limit) => {
    // zq1x and zq10x .. zq19x: the descriptions of many-58 and many-49 .. many-40.
    const expected = [...Array.from({ length: 10 }, (_, i) => `many-${40 + i}`), "many-58"]
    expect(await walkPages(["zq1"], limit)).toEqual(expected)
  })

  it("other statuses filter a 3-letter prefix", async () => {
    expect(await walkPages(["alp"], 3, { statuses: ["hidden"] })).toEqual(["hidden-alpha"])
    expect(await walkPages(["alp"], 3, { statuses: ["hidden"], category: "none" })).toEqual([])
  })

  it.each(["alp", "zq1", "zq7", "zqa", "zqb", "nam", "man", "bet", "gam", "abo", "pla", "soup"])(
    "%j: the prefix table answers what the word walk answered",
    async (term) => {
      for (const limit of [1, 3, 100]) {
        expect(await walkPages([term], limit)).toEqual(await walkPages([term], limit, {}, wordWalk))
      }
    }
  )

  it.each(["alph", "alphabet", "zq", "zq7x", "alp", "zq1", "nam", "soup"])(
    "%j: a public search's pages (a function on PostgreSQL) are those of the same search with one more filter (a statement)",
    async (term) => {
      for (const limit of [1, 2, 7, 100]) {
        const viaStatement = await walkPages([term], limit, { category: "tools" })
        expect(viaStatement.length).toBeGreaterThan(0)
        expect(await walkPages([term], limit)).toEqual(viaStatement)
      }
    }
  )

  it("a word no package holds finds nothing", async () => {
    expect(await walkPages(["zzz"], 10)).toEqual([])
  })
})
