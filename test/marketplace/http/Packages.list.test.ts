/**
 * GET /api/v1/packages over the shared catalogue: default and named orders,
 * every filter, limits and q, refusals of invalid parameters, and the typed
 * client.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import {
  expectOk,
  expectValidationFailed,
  namesOf,
  type Params,
  summaryOf
} from "../fixtures/Listing.js"
import { byLatest, byName, catalog, list, nonPublicNames } from "../fixtures/PackagesCatalog.js"

describe.each(dialects)("GET /api/v1/packages on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, catalog)
  })
  afterAll(() => server.close())

  it("browses public packages by latest publish time by default, ties by name, versionless last", async () => {
    expectOk(await list(server, {}), { items: byLatest.map((name) => summaryOf(catalog, name)), nextCursor: null })
  })

  it.each<[string, Params, ReadonlyArray<string>]>([
    ["sort=latest", { sort: "latest" }, byLatest],
    ["sort=name (byte order)", { sort: "name" }, byName],
    ["sort=relevance without q browses by latest", { sort: "relevance" }, byLatest],
    ["q without words browses by latest", { q: "!!! --" }, byLatest],
    ["sort=relevance with a q without words", { q: " .. ", sort: "relevance" }, byLatest],
    ["q defaults to relevance: name, displayName, keyword, description", { q: "timer" }, [
      "@globex/timer",
      "native-shell",
      "clock",
      "notes"
    ]],
    ["sort=relevance with q", { q: "timer", sort: "relevance" }, ["@globex/timer", "native-shell", "clock", "notes"]],
    ["sort=latest with q", { q: "timer", sort: "latest" }, ["clock", "notes", "native-shell", "@globex/timer"]],
    ["sort=name with q", { q: "timer", sort: "name" }, ["@globex/timer", "clock", "native-shell", "notes"]],
    ["sort=name with a filter", { sort: "name", category: "productivity" }, ["@globex/timer", "native-shell", "notes"]]
  ])("orders by %s", async (_, params, expected) => {
    const response = await list(server, params)
    expect(namesOf(response)).toEqual(expected)
    expect(response.body.nextCursor).toBeNull()
  })

  it.each<[string, Params, ReadonlyArray<string>]>([
    ["category=weather-tools", { category: "weather-tools" }, ["@acme/weather-widget", "weather"]],
    ["category=productivity", { category: "productivity" }, ["notes", "native-shell", "@globex/timer"]],
    ["an unknown category", { category: "nope" }, []],
    ["kind=widget (latest version only)", { kind: "widget" }, ["@acme/weather-widget", "notes", "@globex/timer"]],
    ["kind=service (second facet)", { kind: "service" }, ["@acme/weather-widget"]],
    ["kind=panel (only an old version of the widget has it)", { kind: "panel" }, ["native-shell"]],
    ["isolation=trusted-native (latest version only)", { isolation: "trusted-native" }, ["native-shell"]],
    ["isolation=declarative", { isolation: "declarative" }, ["notes", "weather"]],
    ["isolation=isolated-ui", { isolation: "isolated-ui" }, ["@acme/weather-widget", "@globex/timer"]],
    ["isolation=service", { isolation: "service" }, ["@acme/weather-widget"]],
    ["platform=windows (latest version only)", { platform: "windows" }, ["notes"]],
    ["platform=linux (exact, not linux-arm64)", { platform: "linux" }, ["@acme/weather-widget", "notes", "weather"]],
    ["platform=linux-arm64", { platform: "linux-arm64" }, ["@globex/timer"]],
    ["publisher=acme", { publisher: "acme" }, ["@acme/weather-widget", "notes"]],
    ["publisher=globex", { publisher: "globex" }, ["clock", "weather", "@globex/timer"]],
    ["curation=featured", { curation: "featured" }, ["weather", "native-shell"]],
    ["curation=listed", { curation: "listed" }, ["@acme/weather-widget", "clock", "notes", "@globex/timer", "placeholder"]],
    ["category and kind", { category: "productivity", kind: "widget" }, ["notes", "@globex/timer"]],
    ["kind and isolation from different facets", { kind: "widget", isolation: "service" }, ["@acme/weather-widget"]],
    ["publisher and curation", { publisher: "globex", curation: "listed" }, ["clock", "@globex/timer"]],
    ["every filter at once", {
      category: "weather-tools",
      kind: "command",
      isolation: "declarative",
      platform: "linux",
      publisher: "globex",
      curation: "featured"
    }, ["weather"]],
    ["filters nothing satisfies together", { category: "productivity", publisher: "acme", platform: "macos" }, []],
    ["q and a filter", { q: "timer", publisher: "globex" }, ["@globex/timer", "clock"]]
  ])("filters by %s", async (_, params, expected) => {
    expectOk(await list(server, params), { items: expected.map((name) => summaryOf(catalog, name)), nextCursor: null })
  })

  it.each<Params>([
    {},
    { curation: "listed" },
    { curation: "featured" },
    { sort: "name", category: "weather-tools", publisher: "acme" },
    { kind: "widget", isolation: "trusted-native" },
    { platform: "windows" },
    { q: "secret" },
    { q: "hidden gem" }
  ])("never lists unreviewed, hidden or rejected packages (%o)", async (params) => {
    const names = namesOf(await list(server, params))
    expect(names.filter((name) => nonPublicNames.includes(name))).toEqual([])
  })

  it("pages with limit=1 and accepts limit=100", async () => {
    const first = await list(server, { limit: 1 })
    expect(namesOf(first)).toEqual(["@acme/weather-widget"])
    expect(first.body.nextCursor).toEqual(expect.any(String))
    const all = await list(server, { limit: 100 })
    expect(namesOf(all)).toEqual(byLatest)
    expect(all.body.nextCursor).toBeNull()
  })

  const long = (length: number, char = "a") => char.repeat(length)

  it.each<[string, Params]>([
    ["q of 200 characters", { q: long(200, "x") }],
    ["category slug of 64 characters", { category: long(64) }],
    ["category slug with hyphenated segments", { category: "a-b-1" }],
    ["publisher slug of 64 characters", { publisher: long(64) }],
    ["kind of 32 characters with hyphens", { kind: `${long(31)}-` }],
    ["platform of 40 characters", { platform: `${long(38)}-9` }]
  ])("accepts %s (no match)", async (_, params) => {
    expectOk(await list(server, params), { items: [], nextCursor: null })
  })

  it("accepts q of 200 characters and ignores its punctuation", async () => {
    const response = await list(server, { q: "timer".padEnd(200, "!") })
    expect(namesOf(response)).toEqual(["@globex/timer", "native-shell", "clock", "notes"])
  })

  it.each<[string, string | number]>([
    ["limit", 0],
    ["limit", 101],
    ["limit", -1],
    ["limit", 1.5],
    ["limit", "abc"],
    ["limit", ""],
    ["q", long(201, "x")],
    ["category", long(65)],
    ["category", "Bad"],
    ["category", "a--b"],
    ["category", "-a"],
    ["category", "a-"],
    ["category", "a_b"],
    ["category", ""],
    ["publisher", long(65)],
    ["publisher", "Bad"],
    ["publisher", "a--b"],
    ["publisher", "-a"],
    ["publisher", "a-"],
    ["kind", long(33)],
    ["kind", "widget2"],
    ["kind", "Widget"],
    ["kind", ""],
    ["platform", long(41)],
    ["platform", "Linux"],
    ["platform", "linux_x64"],
    ["isolation", "sandboxed"],
    ["isolation", "Service"],
    ["curation", "hidden"],
    ["curation", "unreviewed"],
    ["sort", "popular"],
    ["sort", "Name"],
    ["cursor", ""],
    ["cursor", long(201)],
    ["cursor", `${long(191, "A")}.abcdefgh`]
  ])("refuses %s=%s with 400 validation_failed", async (parameter, value) => {
    expectValidationFailed(await list(server, { [parameter]: value }), parameter)
  })

  it("decodes through the typed client", async () => {
    const page = await server.client((c) =>
      c.packages.list({ urlParams: { category: "productivity", sort: "name", limit: 2 } })
    )
    expect(page.items.map((item) => item.name)).toEqual(["@globex/timer", "native-shell"])
    expect(page.items[0]).toEqual(summaryOf(catalog, "@globex/timer"))
    expect(page.nextCursor).toEqual(expect.any(String))
    const rest = await server.client((c) =>
      c.packages.list({ urlParams: { category: "productivity", sort: "name", cursor: page.nextCursor! } })
    )
    expect(rest).toEqual({ items: [summaryOf(catalog, "notes")], nextCursor: null })
  })
})
