/**
 * The store contract on SQLite and PostgreSQL, reading the loaded catalogue:
 * PackageStore.detail, versions and release, CatalogStore's categories and
 * collections, and PageStore.published.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { PageStore } from "../../../services/marketplace/PageStore.js"
import { dialects } from "../../support/Databases.js"
import { fixture, type Harness, load, openStores, pageDocument } from "./StoresFixture.js"

// ---------------------------------------------------------------------------
// Reading a loaded catalogue

describe.each(dialects)("stores on %s", (dialect) => {
  let stores: Harness
  beforeAll(async () => {
    stores = await openStores(dialect)
    await stores.run(load(fixture))
  })
  afterAll(() => stores.close())

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
