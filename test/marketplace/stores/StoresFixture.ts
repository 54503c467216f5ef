/**
 * The store contract's catalogue and harness, shared by the Stores.*.contract
 * tests: one import document covering every store, the orders and search
 * results it must give, and stores over a fresh SQLite or PostgreSQL database.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Schema } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlCatalogStore from "../../../layers/marketplace/sql/SqlCatalogStore.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import * as SqlPageStore from "../../../layers/marketplace/sql/SqlPageStore.js"
import { ImportDocument, type ImportDocumentInput } from "../../../schema/marketplace/Import.js"
import { type CurationStatus, publicStatuses } from "../../../schema/marketplace/Package.js"
import type { PageDocument } from "../../../schema/marketplace/Page.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { type Keyset, type PackageQuery, type PackageSlice, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { PageStore } from "../../../services/marketplace/PageStore.js"
import { makeDatabase, type TestDatabase } from "../../support/Databases.js"

// ---------------------------------------------------------------------------
// Fixture

export type PackageInput = NonNullable<ImportDocumentInput["packages"]>[number]
export type VersionInput = NonNullable<PackageInput["versions"]>[number]

export const allStatuses: ReadonlyArray<CurationStatus> = ["unreviewed", "listed", "featured", "hidden", "rejected"]

export const version = (v: string, publishedAt: string, extra: Partial<VersionInput> = {}): VersionInput => ({
  version: v,
  publishedAt,
  indexedAt: publishedAt,
  registryIntegrity: `sha512-${v}`,
  ...extra
})

/** A package with one version published at `publishedAt` (none when null). */
export const pkg = (name: string, publishedAt: string | null, extra: Partial<PackageInput> = {}): PackageInput => ({
  name,
  displayName: name,
  curationStatus: "listed",
  updatedAt: "2024-07-01T00:00:00Z",
  versions: publishedAt === null ? [] : [version("1.0.0", publishedAt)],
  ...extra
})

export const weatherNow: PackageInput = {
  name: "weather-now",
  displayName: "Weather Now",
  description: "Local forecasts at a glance",
  publisher: "acme",
  categorySlug: "tools",
  curationStatus: "listed",
  keywords: ["forecast", "climate"],
  homepage: "https://weather.example",
  repositoryUrl: "https://git.example/weather-now",
  license: "MIT",
  // Not the newest version: a prerelease published later is not the latest.
  latestVersion: "1.1.0",
  updatedAt: "2024-03-11T00:00:00Z",
  versions: [
    version("1.0.0", "2024-01-10T00:00:00Z", { platforms: ["windows"] }),
    version("1.1.0", "2024-03-10T01:00:00+01:00", {
      indexedAt: "2024-03-10T01:00:00Z",
      registryIntegrity: "sha512-weather-1.1.0",
      tarballSha512Verified: true,
      hasProvenance: true,
      readmeHtml: "<p>Weather</p>",
      platforms: ["linux", "macos"],
      facets: [{ kind: "panel", isolation: "declarative", renderer: "html", entry: "dist/panel.js", widgetId: null }],
      permissions: [{ kind: "network", value: "api.weather.example", access: null }],
      previews: [{
        kind: "image",
        url: "https://cdn.example/weather.png",
        alt: "Screenshot",
        contentType: "image/png",
        width: 640,
        height: null
      }],
      securityChecks: [{ check: "malware", result: "pass" }, { check: "licence", result: "warn", details: { note: "dual" } }]
    }),
    version("1.2.0-beta.1", "2024-04-01T00:00:00Z", {
      platforms: ["windows"],
      facets: [{ kind: "widget", isolation: "service", renderer: null, entry: "dist/w.js", widgetId: "w" }]
    })
  ]
}

export const pageDocument = (title: string): typeof PageDocument.Encoded => ({
  schemaVersion: 1,
  layout: { id: "default", version: 1 },
  meta: { title, description: `About ${title}`, locale: "en", noindex: false },
  blocks: [{ id: "b1", type: "paragraph", version: 1, props: { text: title } }]
})

export const fixture: ImportDocumentInput = {
  categories: [
    { slug: "tools", name: "Tools", description: "Handy tools", position: 1 },
    { slug: "media", name: "Media", position: 0 },
    { slug: "empty", name: "Empty", position: 1 }
  ],
  publishers: [{ slug: "acme", name: "Acme Labs", verified: true }, { slug: "solo", name: "Solo Dev" }],
  packages: [
    weatherNow,
    // Search ranking: "zephyr" in the name, the displayName, a keyword, the description.
    pkg("zephyr-core", "2024-02-01T00:00:00Z", {
      displayName: "Core Toolkit",
      description: "Basic building blocks",
      keywords: ["toolkit"],
      categorySlug: "tools"
    }),
    pkg("zephyr-extra", "2024-02-02T00:00:00Z", {
      displayName: "Extra Toolkit",
      description: "More building blocks",
      keywords: ["toolkit"]
    }),
    pkg("breeze-ui", "2024-02-03T00:00:00Z", {
      displayName: "Zephyr Breeze",
      description: "Soft animations",
      keywords: ["animation"],
      curationStatus: "featured",
      publisher: "solo",
      categorySlug: "media"
    }),
    pkg("gale", "2024-02-04T00:00:00Z", {
      displayName: "Gale",
      description: "Strong gusts",
      keywords: ["zephyr", "wind"],
      categorySlug: "media"
    }),
    pkg("calm", "2024-02-05T00:00:00Z", { displayName: "Calm", description: "Inspired by the zephyr of spring" }),
    // Equal publish times, listed out of name order.
    pkg("tie-b", "2024-05-01T00:00:00Z"),
    pkg("tie-a", "2024-05-01T00:00:00Z"),
    pkg("3d-viewer", "2023-12-01T00:00:00Z"),
    pkg("@acme/widget", null, {
      curationStatus: "featured",
      publisher: "acme",
      categorySlug: "tools",
      versions: [
        version("1.0.0", "2023-11-01T00:00:00Z", {
          facets: [{ kind: "widget", isolation: "isolated-ui", renderer: null, entry: "index.js", widgetId: "clock" }]
        })
      ]
    }),
    pkg("no-release", null),
    // Not public, and newer than everything public.
    pkg("secret-tool", "2024-06-01T00:00:00Z", {
      displayName: "Zephyr Secret",
      curationStatus: "hidden",
      categorySlug: "tools"
    }),
    pkg("fresh-tool", "2024-06-02T00:00:00Z", { curationStatus: "unreviewed", categorySlug: "tools" }),
    pkg("bad-tool", "2024-06-03T00:00:00Z", { curationStatus: "rejected", categorySlug: "media" })
  ],
  collections: [
    {
      slug: "starter",
      title: "Starter kit",
      description: "Begin here",
      published: true,
      position: 1,
      items: [
        { packageName: "gale", note: "windy" },
        { packageName: "secret-tool" },
        { packageName: "weather-now" },
        { packageName: "zephyr-core" }
      ]
    },
    { slug: "alpha", title: "Alpha", published: true, position: 1, items: [{ packageName: "calm" }] },
    { slug: "first", title: "First", published: true, position: 0 },
    { slug: "drafts", title: "Drafts", published: false, items: [{ packageName: "fresh-tool", note: "later" }] }
  ],
  pages: [
    {
      slug: "about",
      kind: "custom",
      title: "About",
      revisions: [
        { document: pageDocument("About v1"), publishedAt: "2024-01-01T00:00:00Z" },
        { document: pageDocument("About v2"), publishedAt: "2024-02-01T00:00:00Z" },
        { document: pageDocument("About draft"), createdAt: "2024-03-01T00:00:00Z" }
      ]
    },
    { slug: "docs/getting-started", kind: "docs", title: "Getting started", revisions: [{ document: pageDocument("Start"), publishedAt: "2024-01-05T00:00:00Z" }] },
    { slug: "unreleased", kind: "landing", title: "Soon", revisions: [{ document: pageDocument("Soon") }] }
  ]
}

export const fixtureCounts = { categories: 3, publishers: 2, packages: 14, versions: 15, collections: 4, pages: 3 }

/** Public packages, newest latest version first, ties by name; no version last. */
export const publicByLatest = [
  "tie-a",
  "tie-b",
  "weather-now",
  "calm",
  "gale",
  "breeze-ui",
  "zephyr-extra",
  "zephyr-core",
  "3d-viewer",
  "@acme/widget",
  "no-release"
]
/** Byte order: digits < "@" < letters. */
export const publicByName = [
  "3d-viewer",
  "@acme/widget",
  "breeze-ui",
  "calm",
  "gale",
  "no-release",
  "tie-a",
  "tie-b",
  "weather-now",
  "zephyr-core",
  "zephyr-extra"
]
/** Name match (a tie, by name), then displayName, keyword, description. */
export const zephyrByRelevance = ["zephyr-core", "zephyr-extra", "breeze-ui", "gale", "calm"]

export const decode = Schema.decodeUnknownSync(ImportDocument)

// ---------------------------------------------------------------------------
// Harness

export const storesLayer = (db: TestDatabase) =>
  Layer.mergeAll(SqlPackageStore.layer, SqlCatalogStore.layer, SqlPageStore.layer, SqlCatalogImporter.layer).pipe(
    Layer.provideMerge(Database.layer(db.parsed))
  )
export type Stores = Layer.Layer.Success<ReturnType<typeof storesLayer>>

export interface Harness {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>
  readonly close: () => Promise<void>
}

export const openStores = async (dialect: "sqlite" | "postgres"): Promise<Harness> => {
  const db = await makeDatabase(dialect, { migrated: true })
  const runtime = ManagedRuntime.make(storesLayer(db))
  return {
    run: (effect) => runtime.runPromise(effect),
    close: async () => {
      await runtime.dispose()
      await db.drop()
    }
  }
}

/** A fresh database for one test. */
export const withFreshStores = async <A, E>(dialect: "sqlite" | "postgres", effect: Effect.Effect<A, E, Stores>) => {
  const harness = await openStores(dialect)
  try {
    return await harness.run(effect)
  } finally {
    await harness.close()
  }
}

export const load = (input: ImportDocumentInput) => Effect.flatMap(CatalogImporter, (importer) => importer.load(decode(input)))

export const query = (fields: Partial<PackageQuery>): PackageQuery => ({
  terms: [],
  ordering: "latest",
  statuses: publicStatuses,
  limit: 100,
  ...fields
})

export const names = (fields: Partial<PackageQuery>) =>
  Effect.flatMap(PackageStore, (store) => store.find(query(fields))).pipe(
    Effect.map((slice) => slice.items.map((item) => item.name))
  )

/** Every page of a query, following `next` until it is undefined. */
export const walk = (q: PackageQuery) =>
  Effect.gen(function*() {
    const store = yield* PackageStore
    const pages: Array<Array<string>> = []
    let after: Keyset | undefined = undefined
    do {
      const slice: PackageSlice = yield* store.find({ ...q, after })
      pages.push(slice.items.map((item) => item.name))
      after = slice.next
    } while (after !== undefined && pages.length <= 100)
    return pages
  })

/** Slugs the snapshot looks at: the fixture's plus those the refused documents try to add. */
export const collectionSlugs = ["starter", "alpha", "first", "drafts", "intruder"]
export const pageSlugs = ["about", "docs/getting-started", "unreleased", "intruder"]

/** Everything the stores can read, for before/after comparisons (page revision ids are generated per import). */
export const snapshot = Effect.gen(function*() {
  const packages = yield* PackageStore
  const catalog = yield* CatalogStore
  const pages = yield* PageStore
  const sql = yield* SqlClient.SqlClient
  const listed = yield* packages.find(query({ ordering: "name", statuses: allStatuses, limit: 1000 }))
  const all = listed.items.map((item) => item.name)
  return {
    summaries: listed.items,
    details: yield* Effect.forEach(all, (name) => packages.detail(name, allStatuses)),
    versions: yield* Effect.forEach(all, (name) => packages.versions(name, allStatuses)),
    categories: yield* catalog.categories(allStatuses),
    publishedCollections: yield* catalog.publishedCollections,
    collections: yield* Effect.forEach(collectionSlugs, (slug) => catalog.collectionState(slug)),
    pages: yield* Effect.forEach(pageSlugs, (slug) =>
      pages.published(slug).pipe(Effect.map(Option.map(({ revisionId: _, ...rest }) => rest)))),
    rows: yield* Effect.forEach(
      ["categories", "publishers", "packages", "package_versions", "package_facets", "package_platforms", "collections", "collection_items", "pages", "page_revisions"],
      (table) =>
        sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${sql(table)}`.pipe(
          Effect.map(([row]) => [table, Number(row?.n)] as const)
        )
    )
  }
}).pipe(Effect.orDie)
