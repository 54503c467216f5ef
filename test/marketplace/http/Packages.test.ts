import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { PackageDetail, PackagePage, SearchPage, VersionList } from "../../../schema/marketplace/Package.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import {
  at,
  byteOrder,
  type Document,
  expectNotFound,
  expectOk,
  expectValidationFailed,
  type FixturePackage,
  namesOf,
  packageOf,
  type Params,
  pathName,
  queryString,
  summaryOf,
  version,
  walk
} from "../fixtures/Listing.js"

/*
 * Catalog fixture. Public packages, newest latest version first:
 *   @acme/weather-widget  listed    weather-tools  acme    t300  widget/isolated-ui + service/service  linux, macos
 *   clock                 listed    -              globex  t250  no facets                            -
 *   notes                 listed    productivity   acme    t250  widget/declarative                   windows, linux
 *   weather               featured  weather-tools  globex  t250  command/declarative                  linux
 *                                   (its OLD 0.9.0 had widget/trusted-native on windows)
 *   native-shell          featured  productivity   -       t200  panel/trusted-native                 macos
 *   @globex/timer         listed    productivity   globex  t100  widget/isolated-ui                   linux-arm64
 *   placeholder           listed    -              -       no version
 * Non-public packages are newer and match every filter above.
 */
const widgetLatest = version("2.0.0", 300, {
  tarballSha512Verified: true,
  hasProvenance: true,
  readmeHtml: "<h1>Weather Widget</h1>",
  platforms: ["linux", "macos"],
  facets: [
    { kind: "widget", isolation: "isolated-ui", renderer: "html", entry: "dist/widget.js", widgetId: "weather" },
    { kind: "service", isolation: "service", renderer: null, entry: "dist/service.js", widgetId: null }
  ],
  permissions: [
    { kind: "network", value: "api.weather.example", access: null },
    { kind: "filesystem", value: "~/.weather", access: "read" }
  ],
  previews: [
    { kind: "image", url: "https://cdn.example/w.png", alt: "Widget", contentType: "image/png", width: 640, height: 480 },
    { kind: "video", url: "https://cdn.example/w.mp4", alt: "Demo", contentType: "video/mp4", width: null, height: null }
  ],
  securityChecks: [
    { check: "registry-signature", result: "pass" },
    { check: "install-scripts", result: "warn", details: { scripts: ["postinstall"] } }
  ]
})

const nonPublic = (name: string, curationStatus: "unreviewed" | "hidden" | "rejected", hour: number): FixturePackage => ({
  name,
  displayName: `Secret ${name}`,
  description: "Should never be listed: timer weather",
  keywords: ["secret", "timer"],
  publisher: "acme",
  categorySlug: "weather-tools",
  curationStatus,
  updatedAt: at(hour, 30),
  versions: [
    version("1.0.0", hour, {
      platforms: ["linux", "windows", "macos"],
      facets: [
        { kind: "widget", isolation: "trusted-native", renderer: null, entry: "x.js", widgetId: null },
        { kind: "command", isolation: "declarative", renderer: null, entry: "y.js", widgetId: null }
      ]
    })
  ]
})

const catalog: Document = {
  categories: [
    { slug: "weather-tools", name: "Weather tools" },
    { slug: "productivity", name: "Productivity" }
  ],
  publishers: [
    { slug: "acme", name: "Acme Inc", verified: true },
    { slug: "globex", name: "Globex" }
  ],
  packages: [
    {
      name: "@acme/weather-widget",
      displayName: "Weather Widget",
      description: "Current conditions on your dashboard",
      keywords: ["forecast", "climate"],
      publisher: "acme",
      categorySlug: "weather-tools",
      curationStatus: "listed",
      homepage: "https://acme.example/weather",
      repositoryUrl: "https://git.example/acme/weather-widget",
      license: "MIT",
      updatedAt: at(301, 30),
      // Deliberately not in publish order: versions come back newest first by publish time.
      versions: [
        version("1.2.3-beta.1", 200),
        widgetLatest,
        version("1.0.0", 100, { facets: [{ kind: "panel", isolation: "declarative", renderer: null, entry: "a.js", widgetId: null }] })
      ]
    },
    {
      name: "clock",
      displayName: "Clock",
      description: "A desk clock",
      keywords: ["timer", "alarm"],
      publisher: "globex",
      curationStatus: "listed",
      updatedAt: at(251, 30),
      versions: [version("3.1.0", 250)]
    },
    {
      name: "notes",
      displayName: "Notes",
      description: "Notes with a reminder timer",
      keywords: ["text"],
      publisher: "acme",
      categorySlug: "productivity",
      curationStatus: "listed",
      updatedAt: at(252, 30),
      versions: [
        version("0.1.0", 250, {
          platforms: ["windows", "linux"],
          facets: [{ kind: "widget", isolation: "declarative", renderer: null, entry: "n.js", widgetId: "notes" }]
        })
      ]
    },
    {
      name: "weather",
      displayName: "Weather",
      description: "Forecasts in the terminal",
      keywords: ["cli"],
      publisher: "globex",
      categorySlug: "weather-tools",
      curationStatus: "featured",
      license: "Apache-2.0",
      updatedAt: at(253, 30),
      versions: [
        version("1.0.0", 250, {
          platforms: ["linux"],
          facets: [{ kind: "command", isolation: "declarative", renderer: null, entry: "bin.js", widgetId: null }]
        }),
        version("0.9.0", 150, {
          platforms: ["windows"],
          facets: [{ kind: "widget", isolation: "trusted-native", renderer: null, entry: "old.js", widgetId: null }]
        })
      ]
    },
    {
      name: "native-shell",
      displayName: "Shell Timer",
      description: "Native shell",
      keywords: ["native"],
      categorySlug: "productivity",
      curationStatus: "featured",
      updatedAt: at(201, 30),
      versions: [
        version("5.0.0", 200, {
          platforms: ["macos"],
          facets: [{ kind: "panel", isolation: "trusted-native", renderer: null, entry: "s.js", widgetId: null }]
        })
      ]
    },
    {
      name: "@globex/timer",
      displayName: "Globex Countdown",
      description: "Counts down",
      keywords: ["countdown"],
      publisher: "globex",
      categorySlug: "productivity",
      curationStatus: "listed",
      updatedAt: at(101, 30),
      versions: [
        version("0.0.1", 100, {
          platforms: ["linux-arm64"],
          facets: [{ kind: "widget", isolation: "isolated-ui", renderer: null, entry: "t.js", widgetId: "timer" }]
        })
      ]
    },
    {
      name: "placeholder",
      displayName: "Placeholder",
      description: "Coming soon",
      curationStatus: "listed",
      updatedAt: at(5, 30)
    },
    nonPublic("hidden-gem", "hidden", 400),
    nonPublic("rejected-app", "rejected", 401),
    nonPublic("fresh-upload", "unreviewed", 402)
  ]
}

const nonPublicNames = ["hidden-gem", "rejected-app", "fresh-upload"]
const byLatest = [
  "@acme/weather-widget",
  "clock",
  "notes",
  "weather",
  "native-shell",
  "@globex/timer",
  "placeholder"
]
const byName = ["@acme/weather-widget", "@globex/timer", "clock", "native-shell", "notes", "placeholder", "weather"]

const list = (server: RunningMarketplace, params: Params) => server.request(`/api/v1/packages${queryString(params)}`)

/** Expected detail body of a catalog package. */
const detailOf = (name: string) => {
  const pkg = packageOf(catalog, name)
  const versions = [...(pkg.versions ?? [])].sort((a, b) => byteOrder(b.publishedAt, a.publishedAt))
  return {
    ...summaryOf(catalog, name),
    homepage: pkg.homepage ?? null,
    repositoryUrl: pkg.repositoryUrl ?? null,
    license: pkg.license ?? null,
    latest: versions[0] === undefined ? null : {
      tarballSha512Verified: false,
      hasProvenance: false,
      readmeHtml: null,
      platforms: [],
      facets: [],
      permissions: [],
      previews: [],
      securityChecks: [],
      ...versions[0]
    },
    versions: versions.map((v) => ({ version: v.version, publishedAt: v.publishedAt }))
  }
}

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

describe.each(dialects)("GET /api/v1/packages/{name} and its versions and install coordinate on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, catalog)
  })
  afterAll(() => server.close())

  const get = (name: string, suffix = "", params: Params = {}) =>
    server.request(`/api/v1/packages/${pathName(name)}${suffix}${queryString(params)}`)

  it("returns the exact detail of a scoped package (URL-encoded in the path)", async () => {
    const response = await get("@acme/weather-widget")
    expectOk(response, {
      name: "@acme/weather-widget",
      displayName: "Weather Widget",
      description: "Current conditions on your dashboard",
      latestVersion: "2.0.0",
      publisher: { slug: "acme", name: "Acme Inc", verified: true },
      categorySlug: "weather-tools",
      curationStatus: "listed",
      keywords: ["forecast", "climate"],
      indexedAt: "2024-01-13T12:05:00.000Z",
      updatedAt: "2024-01-13T13:30:00.000Z",
      homepage: "https://acme.example/weather",
      repositoryUrl: "https://git.example/acme/weather-widget",
      license: "MIT",
      latest: {
        version: "2.0.0",
        publishedAt: "2024-01-13T12:00:00.000Z",
        indexedAt: "2024-01-13T12:05:00.000Z",
        registryIntegrity: "sha512-2.0.0+x/300==",
        tarballSha512Verified: true,
        hasProvenance: true,
        readmeHtml: "<h1>Weather Widget</h1>",
        platforms: ["linux", "macos"],
        facets: widgetLatest.facets,
        permissions: widgetLatest.permissions,
        previews: widgetLatest.previews,
        securityChecks: [
          { check: "registry-signature", result: "pass" },
          { check: "install-scripts", result: "warn", details: { scripts: ["postinstall"] } }
        ]
      },
      versions: [
        { version: "2.0.0", publishedAt: "2024-01-13T12:00:00.000Z" },
        { version: "1.2.3-beta.1", publishedAt: "2024-01-09T08:00:00.000Z" },
        { version: "1.0.0", publishedAt: "2024-01-05T04:00:00.000Z" }
      ]
    })
    expect(response.body.latest.securityChecks[0]).not.toHaveProperty("details")
  })

  it.each(["weather", "clock", "@globex/timer", "placeholder"])("returns the exact detail of %s", async (name) => {
    expectOk(await get(name), detailOf(name))
  })

  it.each([
    ["an unknown package", "nope"],
    ["an unknown scoped package", "@acme/nope"],
    ["a hidden package", "hidden-gem"],
    ["a rejected package", "rejected-app"],
    ["an unreviewed package", "fresh-upload"],
    ["a valid name of 214 characters", "a".repeat(214)]
  ])("answers 404 not_found for %s", async (_, name) => {
    expectNotFound(await get(name))
    expectNotFound(await get(name, "/versions"))
    expectNotFound(await get(name, "/install"))
  })

  it.each([
    ["uppercase", "Weather"],
    ["215 characters", "a".repeat(215)],
    ["a leading dot", ".hidden"],
    ["a leading underscore", "_private"],
    ["a scope without a name", "@scope"],
    ["an uppercase scope", "@Acme/weather"]
  ])("answers 400 validation_failed naming `name` for a name with %s", async (_, name) => {
    expectValidationFailed(await get(name), "name")
    expectValidationFailed(await get(name, "/versions"), "name")
    expectValidationFailed(await get(name, "/install"), "name")
  })

  it("lists every indexed version newest first with exactly six fields", async () => {
    expectOk(await get("@acme/weather-widget", "/versions"), {
      items: [
        {
          version: "2.0.0",
          publishedAt: "2024-01-13T12:00:00.000Z",
          indexedAt: "2024-01-13T12:05:00.000Z",
          registryIntegrity: "sha512-2.0.0+x/300==",
          tarballSha512Verified: true,
          hasProvenance: true
        },
        {
          version: "1.2.3-beta.1",
          publishedAt: "2024-01-09T08:00:00.000Z",
          indexedAt: "2024-01-09T08:05:00.000Z",
          registryIntegrity: "sha512-1.2.3-beta.1+x/200==",
          tarballSha512Verified: false,
          hasProvenance: false
        },
        {
          version: "1.0.0",
          publishedAt: "2024-01-05T04:00:00.000Z",
          indexedAt: "2024-01-05T04:05:00.000Z",
          registryIntegrity: "sha512-1.0.0+x/100==",
          tarballSha512Verified: false,
          hasProvenance: false
        }
      ]
    })
    expectOk(await get("weather", "/versions"), {
      items: ["1.0.0", "0.9.0"].map((v) => ({
        version: v,
        publishedAt: v === "1.0.0" ? at(250) : at(150),
        indexedAt: v === "1.0.0" ? at(250, 5) : at(150, 5),
        registryIntegrity: v === "1.0.0" ? "sha512-1.0.0+x/250==" : "sha512-0.9.0+x/150==",
        tarballSha512Verified: false,
        hasProvenance: false
      }))
    })
    expectOk(await get("placeholder", "/versions"), { items: [] })
  })

  it.each<[string, string, Params, object]>([
    ["the latest version by default", "@acme/weather-widget", {}, {
      package: "@acme/weather-widget",
      version: "2.0.0",
      source: "registry",
      integrity: "sha512-2.0.0+x/300==",
      openInApp:
        "app://install?package=%40acme%2Fweather-widget&version=2.0.0&source=registry&integrity=sha512-2.0.0%2Bx%2F300%3D%3D",
      cliCommand: "clark node install @acme/weather-widget@2.0.0"
    }],
    ["an older version", "@acme/weather-widget", { version: "1.0.0" }, {
      package: "@acme/weather-widget",
      version: "1.0.0",
      source: "registry",
      integrity: "sha512-1.0.0+x/100==",
      openInApp:
        "app://install?package=%40acme%2Fweather-widget&version=1.0.0&source=registry&integrity=sha512-1.0.0%2Bx%2F100%3D%3D",
      cliCommand: "clark node install @acme/weather-widget@1.0.0"
    }],
    ["a prerelease version", "@acme/weather-widget", { version: "1.2.3-beta.1" }, {
      package: "@acme/weather-widget",
      version: "1.2.3-beta.1",
      source: "registry",
      integrity: "sha512-1.2.3-beta.1+x/200==",
      openInApp:
        "app://install?package=%40acme%2Fweather-widget&version=1.2.3-beta.1&source=registry&integrity=sha512-1.2.3-beta.1%2Bx%2F200%3D%3D",
      cliCommand: "clark node install @acme/weather-widget@1.2.3-beta.1"
    }],
    ["an unscoped package", "weather", {}, {
      package: "weather",
      version: "1.0.0",
      source: "registry",
      integrity: "sha512-1.0.0+x/250==",
      openInApp: "app://install?package=weather&version=1.0.0&source=registry&integrity=sha512-1.0.0%2Bx%2F250%3D%3D",
      cliCommand: "clark node install weather@1.0.0"
    }]
  ])("gives the install coordinate of %s", async (_, name, params, coordinate) => {
    expectOk(await get(name, "/install", params), coordinate)
  })

  it.each<[string, string, Params]>([
    ["a version that is not indexed", "@acme/weather-widget", { version: "9.9.9" }],
    ["a well-formed prerelease that is not indexed", "@acme/weather-widget", { version: "1.2.3-beta.2" }],
    ["a package without any version", "placeholder", {}],
    ["a version of a hidden package", "hidden-gem", { version: "1.0.0" }]
  ])("answers 404 not_found for %s", async (_, name, params) => {
    expectNotFound(await get(name, "/install", params))
  })

  it.each(["1.2", "v1.2.3", "1.2.3-", "1.2.3-beta!", "1.2.3.4", ""])(
    "answers 400 validation_failed naming `version` for version=%j",
    async (malformed) => {
      expectValidationFailed(await get("@acme/weather-widget", "/install", { version: malformed }), "version")
    }
  )

  it("decodes the detail through the typed client", async () => {
    const detail = await server.client((c) => c.packages.get({ path: { name: "weather" } }))
    expect(detail).toEqual(detailOf("weather"))
    const error = await server.client((c) => Effect.flip(c.packages.get({ path: { name: "hidden-gem" } })))
    expect(error._tag).toBe("NotFound")
  })

  it("fetches a scoped package through the typed client", async () => {
    const detail = await server.client((c) => c.packages.get({ path: { name: "@acme/weather-widget" } }))
    expect(detail).toEqual(detailOf("@acme/weather-widget"))
  })
})

/*
 * The read routes send the bodies the stores build without running the
 * endpoint's encoder (src/http/EncodedJson.ts): that is only right while the
 * encoder would send the very same bytes (same keys, same order, valid values).
 */
describe.each(dialects)("bodies of the read routes on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, catalog, { settings: { readCache: false } })
  })
  afterAll(() => server.close())

  const encoded = <A>(schema: Schema.Schema<A, A>, text: string) => JSON.stringify(Schema.encodeSync(schema)(JSON.parse(text)))

  it.each([
    ["/api/v1/packages", PackagePage],
    ["/api/v1/packages?sort=name&limit=3", PackagePage],
    ["/api/v1/packages?category=weather-tools&kind=widget", PackagePage],
    ["/api/v1/search?q=weather", SearchPage],
    ["/api/v1/search?q=timer&sort=name", SearchPage],
    ...["@acme/weather-widget", "weather", "clock", "@globex/timer", "placeholder"].flatMap((name) => [
      [`/api/v1/packages/${pathName(name)}`, PackageDetail] as const,
      [`/api/v1/packages/${pathName(name)}/versions`, VersionList] as const
    ])
  ] as ReadonlyArray<readonly [string, Schema.Schema<any, any>]>)("GET %s is byte for byte what its schema encodes", async (path, schema) => {
    const response = await server.request(path)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/json")
    expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(response.text)))
    expect(response.text).toBe(encoded(schema, response.text))
  })
})

/** Names up to the 214-character limit, scoped and unscoped. */
const longNames = ["a".repeat(100), "b".repeat(101), "c".repeat(214), `@${"s".repeat(60)}/${"d".repeat(152)}`]
const longNamed: Document = {
  packages: longNames.map((name, i) => ({
    name,
    displayName: `Long ${i}`,
    curationStatus: "listed",
    updatedAt: at(i, 30),
    versions: [version("1.0.0", i)]
  }))
}

describe.each(dialects)("package names up to 214 characters on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, longNamed)
  })
  afterAll(() => server.close())

  it.each(longNames.map((name) => [`${name.length}-character ${name.startsWith("@") ? "scoped" : "unscoped"}`, name]))(
    "serves the detail, versions and install coordinate of a %s name",
    async (_, name) => {
      const path = `/api/v1/packages/${pathName(name)}`
      expectOk(await server.request(path), {
        ...summaryOf(longNamed, name),
        homepage: null,
        repositoryUrl: null,
        license: null,
        latest: {
          ...packageOf(longNamed, name).versions![0],
          tarballSha512Verified: false,
          hasProvenance: false,
          readmeHtml: null,
          platforms: [],
          facets: [],
          permissions: [],
          previews: [],
          securityChecks: []
        },
        versions: [{ version: "1.0.0", publishedAt: packageOf(longNamed, name).versions![0]!.publishedAt }]
      })
      expect((await server.request(`${path}/versions`)).body.items).toHaveLength(1)
      expect((await server.request(`${path}/install`)).body.cliCommand).toBe(`clark node install ${name}@1.0.0`)
    }
  )
})

/*
 * Bulk fixture for pagination: 60 public packages whose names exercise byte
 * order (@, -, ., _), with many publish-time ties, two public packages without
 * versions, and non-public packages interleaved by name and time.
 */
const bulkPackages: ReadonlyArray<FixturePackage> = Array.from({ length: 60 }, (_, i): FixturePackage => {
  const n = String(i).padStart(2, "0")
  const hour = (i * 7) % 13
  return {
    name: [`@bulk/pkg-${n}`, `pkg-${n}`, `pkg.${n}`, `pkg_${n}`][i % 4]!,
    displayName: i % 3 === 2 ? `Bulk item ${n}` : `Item ${n}`,
    description: i % 3 === 1 ? "A bulk package for paging" : "A package for paging",
    keywords: i % 3 === 0 ? ["bulk"] : ["filler"],
    categorySlug: i % 2 === 0 ? "even" : "odd",
    curationStatus: i % 5 === 0 ? "featured" : "listed",
    updatedAt: at(hour, 30),
    versions: [version("1.0.0", hour, { platforms: i % 3 === 0 ? ["linux"] : [] })]
  }
}).concat(
  ["pkg-novers-b", "pkg-novers-a"].map((name) => ({
    name,
    displayName: "Bulk without versions",
    curationStatus: "listed",
    categorySlug: "even",
    updatedAt: at(1)
  })),
  (["hidden", "rejected", "unreviewed", "hidden", "rejected", "unreviewed"] as const).map((curationStatus, i) => ({
    name: `pkg-${String(i * 9).padStart(2, "0")}x`,
    displayName: "Bulk secret",
    keywords: ["bulk"],
    categorySlug: "even",
    curationStatus,
    updatedAt: at(i),
    versions: [version("1.0.0", i * 2, { platforms: ["linux"] })]
  }))
)

const bulk: Document = {
  categories: [{ slug: "even", name: "Even" }, { slug: "odd", name: "Odd" }],
  packages: bulkPackages
}

const publicBulk = bulkPackages.filter((p) => p.curationStatus === "listed" || p.curationStatus === "featured")
const latestTime = (p: FixturePackage) => p.versions?.[0]?.publishedAt ?? ""
const bulkByLatest = [...publicBulk]
  .sort((a, b) => byteOrder(latestTime(b), latestTime(a)) || byteOrder(a.name, b.name))
  .map((p) => p.name)
const bulkByName = publicBulk.map((p) => p.name).sort(byteOrder)
const matchesBulk = (p: FixturePackage) =>
  /\bbulk/i.test([p.name, p.displayName, p.description ?? "", ...(p.keywords ?? [])].join(" "))

describe.each(dialects)("pagination of GET /api/v1/packages on %s", (dialect) => {
  let server: RunningMarketplace
  beforeAll(async () => {
    server = await startMarketplace(dialect, bulk)
  })
  afterAll(() => server.close())

  const firstCursor = async (route: "packages" | "search", params: Params) => {
    const response = await server.request(`/api/v1/${route}${queryString({ ...params, limit: 7 })}`)
    expect(response.status).toBe(200)
    expect(response.body.nextCursor).toEqual(expect.any(String))
    return response.body.nextCursor as string
  }

  it("has the expected fixture shape", () => {
    expect(publicBulk.length).toBe(62)
    expect(publicBulk.filter(matchesBulk).length).toBeGreaterThan(40)
  })

  it("answers 20 items by default", async () => {
    const response = await server.request("/api/v1/packages")
    expect(namesOf(response)).toEqual(bulkByLatest.slice(0, 20))
    expect(response.body.nextCursor).toEqual(expect.any(String))
  })

  it.each<[string, Params, ReadonlyArray<string> | undefined]>([
    ["latest", {}, bulkByLatest],
    ["name", { sort: "name" }, bulkByName],
    ["latest within a category", { category: "even" }, bulkByLatest.filter((name) =>
      publicBulk.find((p) => p.name === name)?.categorySlug === "even"
    )],
    ["name within a platform", { sort: "name", platform: "linux" }, bulkByName.filter((name) =>
      publicBulk.find((p) => p.name === name)?.versions?.[0]?.platforms?.includes("linux")
    )],
    ["relevance with a q matching many", { q: "bulk" }, undefined],
    ["latest with a q matching many", { q: "bulk", sort: "latest" }, bulkByLatest.filter((name) =>
      matchesBulk(packageOf(bulk, name))
    )]
  ])("walks every %s match exactly once, in the order of one page of 100", async (_, params, expected) => {
    const single = await server.request(`/api/v1/packages${queryString({ ...params, limit: 100 })}`)
    const all = namesOf(single)
    expect(single.body.nextCursor).toBeNull()
    if (expected !== undefined) expect(all).toEqual(expected)
    else expect([...all].sort(byteOrder)).toEqual(publicBulk.filter(matchesBulk).map((p) => p.name).sort(byteOrder))
    const walked = await walk(server, "packages", params, 7)
    expect(walked).toEqual(all)
    expect(new Set(walked).size).toBe(walked.length)
  })

  it("walks /search with q exactly like /packages with the same q", async () => {
    const packages = namesOf(await server.request("/api/v1/packages?q=bulk&limit=100"))
    expect(await walk(server, "search", { q: "bulk" }, 7)).toEqual(packages)
    expect(await walk(server, "search", {}, 7)).toEqual(bulkByLatest)
  })

  it("does not bind the limit to the cursor", async () => {
    const cursor = await firstCursor("packages", { sort: "name" })
    const response = await server.request(`/api/v1/packages${queryString({ sort: "name", cursor, limit: 11 })}`)
    expect(namesOf(response)).toEqual(bulkByName.slice(7, 18))
  })

  it("refuses a tampered cursor", async () => {
    const cursor = await firstCursor("packages", {})
    const i = Math.floor(cursor.length / 3)
    const tampered = `${cursor.slice(0, i)}${cursor[i] === "A" ? "B" : "A"}${cursor.slice(i + 1)}`
    expectValidationFailed(await server.request(`/api/v1/packages${queryString({ cursor: tampered })}`), "cursor")
    const checksum = `${cursor.slice(0, -1)}${cursor.endsWith("A") ? "B" : "A"}`
    expectValidationFailed(await server.request(`/api/v1/packages${queryString({ cursor: checksum })}`), "cursor")
  })

  it.each<[string, "packages" | "search", Params, "packages" | "search", Params]>([
    ["another sort", "packages", { sort: "latest" }, "packages", { sort: "name" }],
    ["another sort with the same q", "packages", { q: "bulk" }, "packages", { q: "bulk", sort: "name" }],
    ["another q", "packages", { q: "bulk" }, "packages", { q: "package" }],
    ["a q added", "packages", {}, "packages", { q: "bulk", sort: "latest" }],
    ["another filter", "packages", { category: "even" }, "packages", { category: "odd" }],
    ["a filter added", "packages", {}, "packages", { curation: "listed" }],
    ["a filter removed", "packages", { platform: "linux" }, "packages", {}],
    ["/search", "packages", { q: "bulk" }, "search", { q: "bulk" }],
    ["/search while browsing", "packages", {}, "search", {}],
    ["/packages (from /search)", "search", { q: "bulk" }, "packages", { q: "bulk" }]
  ])("refuses a cursor reused under %s", async (_, from, fromParams, to, toParams) => {
    const cursor = await firstCursor(from, fromParams)
    expectValidationFailed(await server.request(`/api/v1/${to}${queryString({ ...toParams, cursor })}`), "cursor")
  })
})
