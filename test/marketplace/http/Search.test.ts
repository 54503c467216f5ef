import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import {
  at,
  byteOrder,
  type Document,
  expectOk,
  expectValidationFailed,
  type FixturePackage,
  namesOf,
  type Params,
  queryString,
  summaryOf,
  version,
  walk
} from "../fixtures/Listing.js"

/*
 * Each "aurora" package holds the word in exactly one field (aurora: name,
 * sky-lights: displayName, polar-app: keywords, night-sky: description), so
 * the ranking name > displayName > keyword > description is unambiguous.
 * Non-public packages match every query and filter below and are newer.
 */
const facet = (kind: string, isolation: string) => ({ kind, isolation, renderer: null, entry: "main.js", widgetId: null })

const hiddenAurora = (name: string, curationStatus: "hidden" | "rejected" | "unreviewed", hour: number): FixturePackage => ({
  name,
  displayName: "Aurora Secret",
  description: "Aurora sky tracks at night",
  keywords: ["aurora", "weather"],
  publisher: "stargaze",
  categorySlug: "astronomy",
  curationStatus,
  updatedAt: at(hour, 30),
  versions: [version("1.0.0", hour, { platforms: ["linux", "windows"], facets: [facet("widget", "service")] })]
})

const fixture: Document = {
  categories: [{ slug: "astronomy", name: "Astronomy" }, { slug: "photography", name: "Photography" }],
  publishers: [{ slug: "stargaze", name: "Stargaze", verified: true }, { slug: "lenscraft", name: "Lenscraft" }],
  packages: [
    {
      name: "aurora",
      displayName: "Northern Lights",
      description: "Watch the sky",
      keywords: ["night"],
      publisher: "stargaze",
      categorySlug: "astronomy",
      curationStatus: "listed",
      updatedAt: at(10, 30),
      versions: [version("1.0.0", 10, { platforms: ["linux"], facets: [facet("widget", "isolated-ui")] })]
    },
    {
      name: "sky-lights",
      displayName: "Aurora Viewer",
      description: "Photos of the sky",
      keywords: ["photo"],
      publisher: "lenscraft",
      categorySlug: "photography",
      curationStatus: "featured",
      updatedAt: at(40, 30),
      versions: [version("2.1.0", 40, { platforms: ["macos"] })]
    },
    {
      name: "polar-app",
      displayName: "Polar App",
      description: "Arctic trips planner",
      keywords: ["aurora", "arctic"],
      publisher: "lenscraft",
      categorySlug: "astronomy",
      curationStatus: "listed",
      updatedAt: at(30, 30),
      versions: [version("0.3.0", 30, { platforms: ["linux"] })]
    },
    {
      name: "night-sky",
      displayName: "Night Sky",
      description: "Tracks the aurora at night",
      keywords: ["stars"],
      publisher: "stargaze",
      categorySlug: "astronomy",
      curationStatus: "featured",
      updatedAt: at(20, 30),
      versions: [
        version("1.1.0", 20, { platforms: ["linux", "windows"], facets: [facet("widget", "service")] }),
        version("1.0.0", 5, { platforms: ["macos"], facets: [facet("panel", "declarative")] })
      ]
    },
    {
      name: "weather-station",
      displayName: "Weather Station",
      description: "Local weather readings",
      keywords: ["sensor"],
      curationStatus: "listed",
      updatedAt: at(50, 30),
      versions: [version("4.0.0", 50)]
    },
    {
      name: "@beans/finder",
      displayName: "Café Finder",
      description: "Coffee nearby",
      keywords: ["coffee"],
      curationStatus: "listed",
      updatedAt: at(45, 30),
      versions: [version("1.0.0", 45)]
    },
    hiddenAurora("aurora-hidden", "hidden", 60),
    hiddenAurora("aurora-rejected", "rejected", 61),
    hiddenAurora("aurora-pending", "unreviewed", 62)
  ]
}

const byLatest = ["weather-station", "@beans/finder", "sky-lights", "polar-app", "night-sky", "aurora"]
const auroraRanking = ["aurora", "sky-lights", "polar-app", "night-sky"]

const search = (server: RunningMarketplace, params: Params) => server.request(`/api/v1/search${queryString(params)}`)
const page = (query: string, names: ReadonlyArray<string>) => ({
  query,
  items: names.map((name) => summaryOf(fixture, name)),
  nextCursor: null
})

describe.each(dialects)("GET /api/v1/search on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, fixture)
  })
  afterAll(() => server.close())

  it("browses public packages by latest and echoes an empty query when q is absent", async () => {
    expectOk(await search(server, {}), page("", byLatest))
  })

  it.each(["", "!!! ---", "  ", "@/"])("browses by latest and echoes q=%j, which has no words", async (q) => {
    expectOk(await search(server, { q }), page(q, byLatest))
  })

  it.each<[string, string, ReadonlyArray<string>]>([
    ["ranks a name match above displayName above keyword above description", "aurora", auroraRanking],
    ["matches each word as a prefix", "auro", auroraRanking],
    ["ignores case", "AURORA", auroraRanking],
    ["ignores mixed case", "AuRoRa", auroraRanking],
    ["ignores punctuation in q", "aurora!!", auroraRanking],
    ["ignores punctuation around several words", "  (aurora)  ", auroraRanking],
    ["finds weather!! like weather", "weather!!", ["weather-station"]],
    ["finds weather", "weather", ["weather-station"]],
    ["finds a word of a hyphenated name", "station", ["weather-station"]],
    ["finds the scope of a scoped name", "beans", ["@beans/finder"]],
    ["requires every word (AND across name and keywords)", "polar aurora", ["polar-app"]],
    ["requires every word (AND across keywords)", "arctic aurora", ["polar-app"]],
    ["requires every word (AND within displayName)", "aurora viewer", ["sky-lights"]],
    ["requires every word (AND within description)", "aurora tracks", ["night-sky"]],
    ["splits words on punctuation", "aurora,viewer", ["sky-lights"]],
    ["finds nothing when one word matches nothing", "aurora zebra", []],
    ["matches every word as a prefix", "nort ligh", ["aurora"]],
    ["does not match inside a word", "rora", []],
    ["matches a word with a diacritic", "café", ["@beans/finder"]]
  ])("%s (q=%j)", async (_, q, expected) => {
    expectOk(await search(server, { q }), page(q, expected))
  })

  it("answers weather!! exactly like weather apart from the echoed query", async () => {
    const plain = await search(server, { q: "weather" })
    const punctuated = await search(server, { q: "weather!!" })
    expect({ ...punctuated.body, query: "weather" }).toEqual(plain.body)
  })

  it.each<[string, Params, ReadonlyArray<string>]>([
    ["category", { q: "aurora", category: "astronomy" }, ["aurora", "polar-app", "night-sky"]],
    ["publisher", { q: "aurora", publisher: "lenscraft" }, ["sky-lights", "polar-app"]],
    ["platform", { q: "aurora", platform: "linux" }, ["aurora", "polar-app", "night-sky"]],
    ["platform of the latest version only", { q: "aurora", platform: "macos" }, ["sky-lights"]],
    ["kind", { q: "aurora", kind: "widget" }, ["aurora", "night-sky"]],
    ["kind of an old version only", { q: "aurora", kind: "panel" }, []],
    ["kind and isolation", { q: "aurora", kind: "widget", isolation: "service" }, ["night-sky"]],
    ["curation=featured", { q: "aurora", curation: "featured" }, ["sky-lights", "night-sky"]],
    ["curation=listed", { q: "aurora", curation: "listed" }, ["aurora", "polar-app"]],
    ["a second word and a category", { q: "sky", category: "photography" }, ["sky-lights"]],
    ["filters nothing satisfies together", { q: "aurora", category: "photography", publisher: "stargaze" }, []],
    ["a filter without q (browses by latest)", { category: "astronomy" }, ["polar-app", "night-sky", "aurora"]],
    ["publisher and platform without q", { publisher: "stargaze", platform: "windows" }, ["night-sky"]]
  ])("combines q with %s", async (_, params, expected) => {
    expectOk(await search(server, params), page(params.q === undefined ? "" : String(params.q), expected))
  })

  it.each<Params>([
    { q: "aurora" },
    { q: "aurora secret" },
    { q: "aurora", curation: "listed" },
    { q: "aurora", curation: "featured" },
    { q: "aurora", category: "astronomy", publisher: "stargaze", platform: "windows" },
    { category: "astronomy" },
    {}
  ])("never finds unreviewed, hidden or rejected packages (%o)", async (params) => {
    const names = namesOf(await search(server, params))
    expect(names.filter((name) => name.startsWith("aurora-"))).toEqual([])
  })

  it("finds nothing for words only non-public packages have", async () => {
    expectOk(await search(server, { q: "secret" }), page("secret", []))
    expectOk(await search(server, { q: "aurora pending" }), page("aurora pending", []))
  })

  it("pages the ranking with limit and nextCursor", async () => {
    const first = await search(server, { q: "aurora", limit: 3 })
    expect(first.body.query).toBe("aurora")
    expect(namesOf(first)).toEqual(auroraRanking.slice(0, 3))
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const second = await search(server, { q: "aurora", limit: 3, cursor: first.body.nextCursor })
    expectOk(second, page("aurora", auroraRanking.slice(3)))
    expect(await walk(server, "search", { q: "aurora" }, 1)).toEqual(auroraRanking)
    expect(await walk(server, "search", {}, 4)).toEqual(byLatest)
  })

  it.each<[string, string | number]>([
    ["q", "x".repeat(201)],
    ["limit", 0],
    ["limit", 101],
    ["limit", "abc"],
    ["category", "Bad"],
    ["publisher", "a--b"],
    ["kind", "k".repeat(33)],
    ["platform", "p".repeat(41)],
    ["isolation", "sandboxed"],
    ["curation", "hidden"],
    ["cursor", ""],
    ["cursor", "c".repeat(201)],
    ["cursor", "not-a-cursor"]
  ])("refuses %s=%s with 400 validation_failed", async (parameter, value) => {
    expectValidationFailed(await search(server, { [parameter]: value }), parameter)
  })

  it("accepts q of 200 characters and limits 1 and 100", async () => {
    expectOk(await search(server, { q: "aurora".padEnd(200, ".") }), page("aurora".padEnd(200, "."), auroraRanking))
    expect(namesOf(await search(server, { limit: 1 }))).toEqual(byLatest.slice(0, 1))
    expectOk(await search(server, { limit: 100 }), page("", byLatest))
  })

  it("decodes through the typed client", async () => {
    const result = await server.client((c) => c.search.search({ urlParams: { q: "Aurora", limit: 2 } }))
    expect(result.query).toBe("Aurora")
    expect(result.items).toEqual(auroraRanking.slice(0, 2).map((name) => summaryOf(fixture, name)))
    expect(result.nextCursor).toEqual(expect.any(String))
  })
})

/*
 * Which packages a q matches must not depend on the database (the ranking
 * functions differ, so only the matched sets are compared here; the orders
 * that are specified are asserted above on each dialect).
 */
describe("GET /api/v1/search matches the same packages on SQLite and PostgreSQL", () => {
  const servers: Partial<Record<(typeof dialects)[number], RunningMarketplace>> = {}
  beforeAll(async () => {
    for (const dialect of dialects) servers[dialect] = await startMarketplace(dialect, fixture)
  })
  afterAll(async () => {
    for (const server of Object.values(servers)) await server.close()
  })

  it.each(["sky", "night", "aurora sky", "s", "café", "cafe", "Cafe", "finder cafe"])("q=%j", async (q) => {
    const [sqlite, postgres] = await Promise.all(
      dialects.map(async (dialect) => [...namesOf(await search(servers[dialect]!, { q }))].sort(byteOrder))
    )
    expect(sqlite!.length + postgres!.length).toBeGreaterThan(0)
    expect(postgres).toEqual(sqlite)
  })
})
