/**
 * The store contract on SQLite and PostgreSQL, PackageStore.find over the
 * loaded catalogue: orderings and keyset paging, full-text terms, filters and
 * statuses, and the summaries it returns.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { PackageStore, type PackageQuery } from "../../../services/marketplace/PackageStore.js"
import { dialects } from "../../support/Databases.js"
import {
  allStatuses,
  fixture,
  type Harness,
  load,
  names,
  openStores,
  publicByLatest,
  publicByName,
  query,
  walk,
  zephyrByRelevance
} from "./StoresFixture.js"

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
})
