/**
 * The store contract, run identically on SQLite and PostgreSQL through the
 * service layers (no HTTP): PackageStore, CatalogStore, PageStore and the
 * all-or-nothing CatalogImporter.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
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
import { CatalogImporter, type ImportRejected } from "../../../services/marketplace/CatalogImporter.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { type Keyset, type PackageQuery, type PackageSlice, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { PageStore } from "../../../services/marketplace/PageStore.js"
import { dialects, makeDatabase, type TestDatabase } from "../../support/Databases.js"

// ---------------------------------------------------------------------------
// Fixture

type PackageInput = NonNullable<ImportDocumentInput["packages"]>[number]
type VersionInput = NonNullable<PackageInput["versions"]>[number]

const allStatuses: ReadonlyArray<CurationStatus> = ["unreviewed", "listed", "featured", "hidden", "rejected"]

const version = (v: string, publishedAt: string, extra: Partial<VersionInput> = {}): VersionInput => ({
  version: v,
  publishedAt,
  indexedAt: publishedAt,
  registryIntegrity: `sha512-${v}`,
  ...extra
})

/** A package with one version published at `publishedAt` (none when null). */
const pkg = (name: string, publishedAt: string | null, extra: Partial<PackageInput> = {}): PackageInput => ({
  name,
  displayName: name,
  curationStatus: "listed",
  updatedAt: "2024-07-01T00:00:00Z",
  versions: publishedAt === null ? [] : [version("1.0.0", publishedAt)],
  ...extra
})

const weatherNow: PackageInput = {
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

const pageDocument = (title: string): typeof PageDocument.Encoded => ({
  schemaVersion: 1,
  layout: { id: "default", version: 1 },
  meta: { title, description: `About ${title}`, locale: "en", noindex: false },
  blocks: [{ id: "b1", type: "paragraph", version: 1, props: { text: title } }]
})

const fixture: ImportDocumentInput = {
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

const fixtureCounts = { categories: 3, publishers: 2, packages: 14, versions: 15, collections: 4, pages: 3 }

/** Public packages, newest latest version first, ties by name; no version last. */
const publicByLatest = [
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
const publicByName = [
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
const zephyrByRelevance = ["zephyr-core", "zephyr-extra", "breeze-ui", "gale", "calm"]

const decode = Schema.decodeUnknownSync(ImportDocument)

// ---------------------------------------------------------------------------
// Harness

const storesLayer = (db: TestDatabase) =>
  Layer.mergeAll(SqlPackageStore.layer, SqlCatalogStore.layer, SqlPageStore.layer, SqlCatalogImporter.layer).pipe(
    Layer.provideMerge(Database.layer(db.parsed))
  )
type Stores = Layer.Layer.Success<ReturnType<typeof storesLayer>>

interface Harness {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>
  readonly close: () => Promise<void>
}

const openStores = async (dialect: "sqlite" | "postgres"): Promise<Harness> => {
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
const withFreshStores = async <A, E>(dialect: "sqlite" | "postgres", effect: Effect.Effect<A, E, Stores>) => {
  const harness = await openStores(dialect)
  try {
    return await harness.run(effect)
  } finally {
    await harness.close()
  }
}

const load = (input: ImportDocumentInput) => Effect.flatMap(CatalogImporter, (importer) => importer.load(decode(input)))

const query = (fields: Partial<PackageQuery>): PackageQuery => ({
  terms: [],
  ordering: "latest",
  statuses: publicStatuses,
  limit: 100,
  ...fields
})

const names = (fields: Partial<PackageQuery>) =>
  Effect.flatMap(PackageStore, (store) => store.find(query(fields))).pipe(
    Effect.map((slice) => slice.items.map((item) => item.name))
  )

/** Every page of a query, following `next` until it is undefined. */
const walk = (q: PackageQuery) =>
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
const collectionSlugs = ["starter", "alpha", "first", "drafts", "intruder"]
const pageSlugs = ["about", "docs/getting-started", "unreleased", "intruder"]

/** Everything the stores can read, for before/after comparisons (page revision ids are generated per import). */
const snapshot = Effect.gen(function*() {
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

// ---------------------------------------------------------------------------
// Reading a loaded catalogue

describe.each(dialects)("stores on %s", (dialect) => {
  let stores: Harness
  beforeAll(async () => {
    stores = await openStores(dialect)
    await stores.run(load(fixture))
  })
  afterAll(() => stores.close())

  describe("PackageStore.find", () => {
    const orderings: ReadonlyArray<{ label: string; q: Partial<PackageQuery>; expected: ReadonlyArray<string> }> = [
      { label: "latest", q: { ordering: "latest" }, expected: publicByLatest },
      { label: "name", q: { ordering: "name" }, expected: publicByName },
      { label: "relevance without terms (browses by latest)", q: { ordering: "relevance" }, expected: publicByLatest },
      { label: "relevance for zephyr", q: { ordering: "relevance", terms: ["zephyr"] }, expected: zephyrByRelevance },
      {
        label: "latest for zephyr",
        q: { ordering: "latest", terms: ["zephyr"] },
        expected: ["calm", "gale", "breeze-ui", "zephyr-extra", "zephyr-core"]
      },
      {
        label: "name for zephyr",
        q: { ordering: "name", terms: ["zephyr"] },
        expected: ["breeze-ui", "calm", "gale", "zephyr-core", "zephyr-extra"]
      }
    ]
    const cases = orderings.flatMap((ordering) => [1, 2, 3, 100].map((limit) => ({ ...ordering, limit })))

    it.each(cases)("$label, pages of $limit, continue exactly after the last row", async ({ expected, limit, q }) => {
      const pages = await stores.run(walk(query({ ...q, limit })))
      expect(pages.flat()).toEqual(expected)
      // Every page is full except the last, which is not empty: `next` is unset exactly when nothing follows.
      const sizes = expected.map((_, i) => i).filter((i) => i % limit === 0).map((i) =>
        Math.min(limit, expected.length - i)
      )
      expect(pages.map((page) => page.length)).toEqual(sizes)
    })

    it("sets next when one more row follows and leaves it unset when the page ends the list", async () => {
      const [short, exact] = await stores.run(Effect.flatMap(PackageStore, (store) =>
        Effect.all([
          store.find(query({ limit: publicByLatest.length - 1 })),
          store.find(query({ limit: publicByLatest.length }))
        ])
      ))
      expect(short!.next).toBeDefined()
      expect(exact!.next).toBeUndefined()
    })

    it.each([
      { label: "a word prefix", terms: ["weath"], expected: ["weather-now"] },
      { label: "a prefix, ranked", terms: ["zeph"], expected: zephyrByRelevance },
      { label: "a keyword", terms: ["forecast"], expected: ["weather-now"] },
      { label: "a description word", terms: ["glance"], expected: ["weather-now"] },
      { label: "a scope of a scoped name", terms: ["acme"], expected: ["@acme/widget"] },
      { label: "every word (AND)", terms: ["zephyr", "toolkit"], expected: ["zephyr-core", "zephyr-extra"] },
      { label: "every word, across fields", terms: ["zephyr", "wind"], expected: ["gale"] },
      { label: "no package with both words", terms: ["weather", "zephyr"], expected: [] },
      { label: "words of non-public packages only", terms: ["secret"], expected: [] }
    ])("full text: $label", async ({ expected, terms }) => {
      expect(await stores.run(names({ terms, ordering: "relevance" }))).toEqual(expected)
    })

    it.each<{ label: string; q: Partial<PackageQuery>; expected: ReadonlyArray<string> }>([
      { label: "category", q: { category: "tools" }, expected: ["weather-now", "zephyr-core", "@acme/widget"] },
      { label: "another category", q: { category: "media" }, expected: ["gale", "breeze-ui"] },
      { label: "empty category", q: { category: "empty" }, expected: [] },
      { label: "publisher", q: { publisher: "acme" }, expected: ["weather-now", "@acme/widget"] },
      { label: "kind of the latest version", q: { kind: "panel" }, expected: ["weather-now"] },
      { label: "kind of a newer prerelease is ignored", q: { kind: "widget" }, expected: ["@acme/widget"] },
      { label: "isolation of the latest version", q: { isolation: "declarative" }, expected: ["weather-now"] },
      { label: "isolation of a non-latest version is ignored", q: { isolation: "service" }, expected: [] },
      { label: "platform of the latest version", q: { platform: "linux" }, expected: ["weather-now"] },
      { label: "platform of older versions is ignored", q: { platform: "windows" }, expected: [] },
      {
        label: "filters combine with AND",
        q: { category: "tools", publisher: "acme", kind: "panel", terms: ["weather"] },
        expected: ["weather-now"]
      },
      { label: "disjoint filters", q: { category: "media", publisher: "acme" }, expected: [] },
      { label: "statuses: featured", q: { statuses: ["featured"] }, expected: ["breeze-ui", "@acme/widget"] },
      { label: "statuses: hidden", q: { statuses: ["hidden"] }, expected: ["secret-tool"] },
      {
        label: "statuses: all",
        q: { statuses: allStatuses },
        expected: ["bad-tool", "fresh-tool", "secret-tool", ...publicByLatest]
      }
    ])("filters: $label", async ({ expected, q }) => {
      expect(await stores.run(names(q))).toEqual(expected)
    })

    it("returns complete summaries", async () => {
      const slice = await stores.run(Effect.flatMap(PackageStore, (store) => store.find(query({ terms: ["weather"] }))))
      expect(slice).toEqual({
        items: [{
          name: "weather-now",
          displayName: "Weather Now",
          description: "Local forecasts at a glance",
          latestVersion: "1.1.0",
          publisher: { slug: "acme", name: "Acme Labs", verified: true },
          categorySlug: "tools",
          curationStatus: "listed",
          keywords: ["forecast", "climate"],
          indexedAt: "2024-03-10T01:00:00.000Z",
          updatedAt: "2024-03-11T00:00:00.000Z"
        }],
        next: undefined
      })
    })
  })

  describe("PackageStore.detail, versions and release", () => {
    const run = <A>(use: (store: PackageStore["Type"]) => Effect.Effect<A>) => stores.run(Effect.flatMap(PackageStore, use))

    it("describes a package with its latest version and every version newest first", async () => {
      expect(await run((store) => store.detail("weather-now", publicStatuses))).toEqual(Option.some({
        name: "weather-now",
        displayName: "Weather Now",
        description: "Local forecasts at a glance",
        latestVersion: "1.1.0",
        publisher: { slug: "acme", name: "Acme Labs", verified: true },
        categorySlug: "tools",
        curationStatus: "listed",
        keywords: ["forecast", "climate"],
        indexedAt: "2024-03-10T01:00:00.000Z",
        updatedAt: "2024-03-11T00:00:00.000Z",
        homepage: "https://weather.example",
        repositoryUrl: "https://git.example/weather-now",
        license: "MIT",
        latest: {
          version: "1.1.0",
          publishedAt: "2024-03-10T00:00:00.000Z",
          indexedAt: "2024-03-10T01:00:00.000Z",
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
        },
        versions: [
          { version: "1.2.0-beta.1", publishedAt: "2024-04-01T00:00:00.000Z" },
          { version: "1.1.0", publishedAt: "2024-03-10T00:00:00.000Z" },
          { version: "1.0.0", publishedAt: "2024-01-10T00:00:00.000Z" }
        ]
      }))
    })

    it("describes a package without versions with latest null", async () => {
      const detail = await run((store) => store.detail("no-release", publicStatuses))
      expect(Option.map(detail, ({ indexedAt, latest, latestVersion, versions }) => ({ indexedAt, latest, latestVersion, versions })))
        .toEqual(Option.some({ indexedAt: null, latest: null, latestVersion: null, versions: [] }))
    })

    it("lists every version newest first", async () => {
      expect(await run((store) => store.versions("weather-now", publicStatuses))).toEqual(Option.some([
        {
          version: "1.2.0-beta.1",
          publishedAt: "2024-04-01T00:00:00.000Z",
          indexedAt: "2024-04-01T00:00:00.000Z",
          registryIntegrity: "sha512-1.2.0-beta.1",
          tarballSha512Verified: false,
          hasProvenance: false
        },
        {
          version: "1.1.0",
          publishedAt: "2024-03-10T00:00:00.000Z",
          indexedAt: "2024-03-10T01:00:00.000Z",
          registryIntegrity: "sha512-weather-1.1.0",
          tarballSha512Verified: true,
          hasProvenance: true
        },
        {
          version: "1.0.0",
          publishedAt: "2024-01-10T00:00:00.000Z",
          indexedAt: "2024-01-10T00:00:00.000Z",
          registryIntegrity: "sha512-1.0.0",
          tarballSha512Verified: false,
          hasProvenance: false
        }
      ]))
      expect(await run((store) => store.versions("no-release", publicStatuses))).toEqual(Option.some([]))
    })

    it.each([
      { label: "the latest, not the newest prerelease", version: undefined, expected: "1.1.0", integrity: "sha512-weather-1.1.0" },
      { label: "a named older version", version: "1.0.0", expected: "1.0.0", integrity: "sha512-1.0.0" },
      { label: "a named prerelease", version: "1.2.0-beta.1", expected: "1.2.0-beta.1", integrity: "sha512-1.2.0-beta.1" }
    ])("release: $label", async ({ expected, integrity, version }) => {
      expect(await run((store) => store.release("weather-now", version, publicStatuses))).toEqual(
        Option.some({ name: "weather-now", version: expected, integrity })
      )
    })

    it.each([
      { label: "an absent package", name: "nope", version: undefined },
      { label: "an unknown version", name: "weather-now", version: "9.9.9" },
      { label: "a package without versions", name: "no-release", version: undefined },
      { label: "a hidden package", name: "secret-tool", version: undefined },
      { label: "an unreviewed package", name: "fresh-tool", version: "1.0.0" },
      { label: "a rejected package", name: "bad-tool", version: undefined }
    ])("release: none for $label", async ({ name, version }) => {
      expect(await run((store) => store.release(name, version, publicStatuses))).toEqual(Option.none())
    })

    it.each(["nope", "secret-tool", "fresh-tool", "bad-tool"])("detail and versions: none for %s", async (name) => {
      expect(await run((store) => store.detail(name, publicStatuses))).toEqual(Option.none())
      expect(await run((store) => store.versions(name, publicStatuses))).toEqual(Option.none())
    })

    it("finds a filtered-out package when its status is asked for", async () => {
      const detail = await run((store) => store.detail("secret-tool", ["hidden"]))
      expect(Option.map(detail, (d) => [d.name, d.curationStatus, d.latestVersion])).toEqual(
        Option.some(["secret-tool", "hidden", "1.0.0"])
      )
      expect(await run((store) => store.release("secret-tool", undefined, ["hidden"]))).toEqual(
        Option.some({ name: "secret-tool", version: "1.0.0", integrity: "sha512-1.0.0" })
      )
    })
  })

  describe("CatalogStore", () => {
    const run = <A>(use: (store: CatalogStore["Type"]) => Effect.Effect<A>) => stores.run(Effect.flatMap(CatalogStore, use))

    it("counts the asked-for statuses per category, by position then slug", async () => {
      expect(await run((store) => store.categories(publicStatuses))).toEqual([
        { slug: "media", name: "Media", description: "", packageCount: 2 },
        { slug: "empty", name: "Empty", description: "", packageCount: 0 },
        { slug: "tools", name: "Tools", description: "Handy tools", packageCount: 3 }
      ])
      expect((await run((store) => store.categories(["hidden", "unreviewed", "rejected"]))).map((c) => c.packageCount))
        .toEqual([1, 0, 2])
    })

    it("reads one category, or none", async () => {
      expect(await run((store) => store.category("tools", publicStatuses))).toEqual(
        Option.some({ slug: "tools", name: "Tools", description: "Handy tools", packageCount: 3 })
      )
      expect(await run((store) => store.category("nope", publicStatuses))).toEqual(Option.none())
    })

    it("lists published collections by position then slug", async () => {
      expect(await run((store) => store.publishedCollections)).toEqual([
        { slug: "first", title: "First", description: "" },
        { slug: "alpha", title: "Alpha", description: "" },
        { slug: "starter", title: "Starter kit", description: "Begin here" }
      ])
    })

    it("lists a published collection's packages of the asked-for statuses in editorial order", async () => {
      const collection = await run((store) => store.publishedCollection("starter", publicStatuses))
      expect(Option.map(collection, ({ packages, ...summary }) => ({ ...summary, packages: packages.map((p) => p.name) })))
        .toEqual(Option.some({
          slug: "starter",
          title: "Starter kit",
          description: "Begin here",
          packages: ["gale", "weather-now", "zephyr-core"]
        }))
    })

    it.each(["drafts", "nope"])("has no published collection %s", async (slug) => {
      expect(await run((store) => store.publishedCollection(slug, publicStatuses))).toEqual(Option.none())
    })

    it("shows the curator every item, public or not, and unpublished collections", async () => {
      expect(await run((store) => store.collectionState("starter"))).toEqual(Option.some({
        slug: "starter",
        title: "Starter kit",
        description: "Begin here",
        published: true,
        position: 1,
        items: [
          { packageName: "gale", position: 0, note: "windy" },
          { packageName: "secret-tool", position: 1, note: null },
          { packageName: "weather-now", position: 2, note: null },
          { packageName: "zephyr-core", position: 3, note: null }
        ]
      }))
      expect(await run((store) => store.collectionState("drafts"))).toEqual(Option.some({
        slug: "drafts",
        title: "Drafts",
        description: "",
        published: false,
        position: 0,
        items: [{ packageName: "fresh-tool", position: 0, note: "later" }]
      }))
      expect(await run((store) => store.collectionState("nope"))).toEqual(Option.none())
    })
  })

  describe("PageStore.published", () => {
    const published = (slug: string) => stores.run(Effect.flatMap(PageStore, (store) => store.published(slug)))

    it("returns the newest published revision, never the newer draft", async () => {
      const page = Option.getOrThrow(await published("about"))
      expect(page).toEqual({
        page: { id: expect.stringMatching(/^pg_/), slug: "about", kind: "custom", title: "About" },
        revisionId: expect.stringMatching(/^rev_/),
        revisionNumber: 2,
        publishedAt: "2024-02-01T00:00:00.000Z",
        document: pageDocument("About v2")
      })
    })

    it("serves nested slugs", async () => {
      const page = await published("docs/getting-started")
      expect(Option.map(page, (p) => [p.page.kind, p.revisionNumber, p.document.meta.title])).toEqual(
        Option.some(["docs", 1, "Start"])
      )
    })

    it.each(["unreleased", "nope", "docs"])("has no published page %s", async (slug) => {
      expect(await published(slug)).toEqual(Option.none())
    })
  })
})

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
