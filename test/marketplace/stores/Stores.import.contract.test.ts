/**
 * The store contract on SQLite and PostgreSQL, CatalogImporter: exact counts,
 * idempotent re-imports, replacing a package's versions, and all-or-nothing
 * refusals that leave the stores as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { ImportDocumentInput } from "../../../schema/marketplace/Import.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogImporter, type ImportRejected } from "../../../services/marketplace/CatalogImporter.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { dialects } from "../../support/Databases.js"
import {
  allStatuses,
  decode,
  fixture,
  fixtureCounts,
  type Harness,
  load,
  names,
  openStores,
  type PackageInput,
  pageDocument,
  pkg,
  query,
  snapshot,
  version,
  weatherNow,
  withFreshStores
} from "./StoresFixture.js"


// ---------------------------------------------------------------------------
// Importing

/**
 * A refused document: self-contained, and besides its fault it renames a category and a publisher, adds others,
 * changes and adds packages, a collection and a page.
 */
const faulty = (fault: Partial<ImportDocumentInput>): ImportDocumentInput => ({
  categories: [{ slug: "tools", name: "Renamed tools" }, { slug: "intruder", name: "Intruder" }],
  publishers: [{ slug: "acme", name: "Acme renamed", verified: false }, { slug: "intruder", name: "Intruder" }],
  packages: [
    { ...weatherNow, description: "Changed", latestVersion: "2.0.0", versions: [version("2.0.0", "2024-08-01T00:00:00Z")] },
    pkg("intruder-one", "2024-08-02T00:00:00Z", { categorySlug: "intruder", publisher: "intruder" }),
    pkg("intruder-two", "2024-08-03T00:00:00Z", { categorySlug: "tools" })
  ],
  collections: [{ slug: "intruder", title: "Intruder", published: true, items: [{ packageName: "intruder-one" }] }],
  pages: [{ slug: "intruder", kind: "custom", title: "Intruder", revisions: [{ document: pageDocument("X"), publishedAt: "2024-08-01T00:00:00Z" }] }],
  ...fault
})

/** The comparable part of a refusal (the error itself is a proxy that vitest cannot diff). */
const refusal = (error: ImportRejected) => ({ _tag: error._tag, path: error.path })

const base = faulty({})
const basePackages = base.packages ?? []

const rejections: ReadonlyArray<{ label: string; document: ImportDocumentInput; path: string }> = [
  {
    label: "the last package names an unknown category",
    document: faulty({ packages: [...basePackages, pkg("late", null, { categorySlug: "missing" })] }),
    path: "packages[3].categorySlug"
  },
  {
    label: "a package names an unknown publisher",
    document: faulty({ packages: [...basePackages, pkg("late", null, { publisher: "missing" })] }),
    path: "packages[3].publisher"
  },
  {
    label: "a duplicate package name",
    document: faulty({ packages: [...basePackages, pkg("intruder-one", null)] }),
    path: "packages[3].name"
  },
  {
    label: "a duplicate version",
    document: faulty({
      packages: [
        ...basePackages,
        pkg("late", null, { versions: [version("1.0.0", "2024-01-01T00:00:00Z"), version("1.0.0", "2024-01-02T00:00:00Z")] })
      ]
    }),
    path: "packages[3].versions[1].version"
  },
  {
    label: "latestVersion not among the versions",
    document: faulty({ packages: [...basePackages, pkg("late", "2024-01-01T00:00:00Z", { latestVersion: "1.0.1" })] }),
    path: "packages[3].latestVersion"
  },
  {
    label: "a collection item naming an unknown package",
    document: faulty({
      collections: [
        ...(base.collections ?? []),
        { slug: "first", title: "First", items: [{ packageName: "gale" }, { packageName: "missing" }] }
      ]
    }),
    path: "collections[1].items[1].packageName"
  },
  {
    label: "a duplicate category slug",
    document: faulty({ categories: [...(base.categories ?? []), { slug: "tools", name: "Again" }] }),
    path: "categories[2].slug"
  },
  {
    label: "a duplicate collection slug",
    document: faulty({ collections: [...(base.collections ?? []), { slug: "intruder", title: "Again" }] }),
    path: "collections[1].slug"
  }
]

describe.each(dialects)("CatalogImporter on %s", (dialect) => {
  it("is empty, then loads a document with exact counts", async () => {
    const [before, counts, after] = await withFreshStores(dialect, Effect.flatMap(CatalogImporter, (importer) =>
      Effect.all([importer.isEmpty, importer.load(decode(fixture)), importer.isEmpty])))
    expect(before).toBe(true)
    expect(counts).toEqual(fixtureCounts)
    expect(after).toBe(false)
  })

  it("changes nothing when the same document is imported twice", async () => {
    const [first, counts, second] = await withFreshStores(dialect, Effect.all([
      Effect.zipRight(load(fixture), snapshot),
      load(fixture),
      snapshot
    ]))
    expect(counts).toEqual(fixtureCounts)
    expect(second).toEqual(first)
    expect(Object.fromEntries(second.rows)).toMatchObject({ packages: 14, package_versions: 15, collection_items: 6 })
  })

  it("replaces a re-imported package's versions, facets and text, keeping what the document leaves out", async () => {
    const changed: PackageInput = {
      ...weatherNow,
      keywords: ["radar"],
      latestVersion: "2.0.0",
      versions: [
        version("2.0.0", "2024-08-01T00:00:00Z", {
          platforms: ["windows"],
          facets: [{ kind: "dial", isolation: "service", renderer: null, entry: "d.js", widgetId: null }]
        })
      ]
    }
    const result = await withFreshStores(dialect, Effect.gen(function*() {
      yield* load(fixture)
      const counts = yield* load({ packages: [changed] })
      const store = yield* PackageStore
      const catalog = yield* CatalogStore
      return {
        counts,
        detail: yield* store.detail("weather-now", publicStatuses),
        versions: yield* store.versions("weather-now", publicStatuses),
        oldRelease: yield* store.release("weather-now", "1.1.0", publicStatuses),
        latest: yield* names({ limit: 2 }),
        byOldKeyword: yield* names({ terms: ["climate"] }),
        byNewKeyword: yield* names({ terms: ["radar"] }),
        byOldKind: yield* names({ kind: "panel" }),
        byNewKind: yield* names({ kind: "dial" }),
        byNewPlatform: yield* names({ platform: "windows" }),
        others: (yield* store.find(query({ statuses: allStatuses }))).items.length,
        starter: yield* catalog.collectionState("starter")
      }
    }))
    expect(result.counts).toEqual({ categories: 0, publishers: 0, packages: 1, versions: 1, collections: 0, pages: 0 })
    expect(Option.map(result.detail, (d) => [d.latestVersion, d.latest?.version, d.versions])).toEqual(
      Option.some(["2.0.0", "2.0.0", [{ version: "2.0.0", publishedAt: "2024-08-01T00:00:00.000Z" }]])
    )
    expect(Option.map(result.versions, (items) => items.map((v) => v.version))).toEqual(Option.some(["2.0.0"]))
    expect(result.oldRelease).toEqual(Option.none())
    expect(result.latest).toEqual(["weather-now", "tie-a"])
    expect(result.byOldKeyword).toEqual([])
    expect(result.byNewKeyword).toEqual(["weather-now"])
    expect(result.byOldKind).toEqual([])
    expect(result.byNewKind).toEqual(["weather-now"])
    expect(result.byNewPlatform).toEqual(["weather-now"])
    expect(result.others).toBe(14)
    expect(Option.map(result.starter, (s) => s.items.map((i) => i.packageName))).toEqual(
      Option.some(["gale", "secret-tool", "weather-now", "zephyr-core"])
    )
  })

  it("stores nothing from a document whose last package names an unknown category", async () => {
    const document = faulty({ packages: [...basePackages, pkg("late", null, { categorySlug: "missing" })] })
    const result = await withFreshStores(dialect, Effect.gen(function*() {
      const importer = yield* CatalogImporter
      const error = yield* Effect.flip(importer.load(decode(document)))
      return { error, isEmpty: yield* importer.isEmpty, after: yield* snapshot }
    }))
    expect(refusal(result.error)).toEqual({ _tag: "ImportRejected", path: "packages[3].categorySlug" })
    expect(result.error.message).toContain("missing")
    expect(result.isEmpty).toBe(true)
    expect(result.after.summaries).toEqual([])
    expect(result.after.categories).toEqual([])
    expect(result.after.collections.every(Option.isNone)).toBe(true)
    expect(result.after.pages.every(Option.isNone)).toBe(true)
    expect(result.after.rows).toEqual(result.after.rows.map(([table]) => [table, 0]))
  })

  describe("refusals leave a loaded catalogue unchanged", () => {
    let stores: Harness
    let before: Effect.Effect.Success<typeof snapshot>
    beforeAll(async () => {
      stores = await openStores(dialect)
      before = await stores.run(Effect.zipRight(load(fixture), snapshot))
    })
    afterAll(() => stores.close())

    it("accepts the refused documents' common part on its own (so each refusal is about its fault)", async () => {
      const harness = await openStores(dialect)
      try {
        const counts = await harness.run(Effect.zipRight(load(fixture), load(base)))
        expect(counts).toEqual({ categories: 2, publishers: 2, packages: 3, versions: 3, collections: 1, pages: 1 })
      } finally {
        await harness.close()
      }
    })

    it.each(rejections)("refuses $label at $path", async ({ document, path }) => {
      const error = await stores.run(Effect.flip(load(document)))
      expect(refusal(error)).toEqual({ _tag: "ImportRejected", path })
      expect(error.message.length).toBeGreaterThan(0)
      expect(await stores.run(snapshot)).toEqual(before)
    })
  })
})
