/**
 * GET /api/v1/packages/{name}, its versions and its install coordinate: exact
 * bodies, scoped names, non-public packages, version ranges, and names up to
 * the 214-character limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import {
  at,
  type Document,
  expectNotFound,
  expectOk,
  expectValidationFailed,
  packageOf,
  type Params,
  pathName,
  queryString,
  summaryOf,
  version
} from "../fixtures/Listing.js"
import { catalog, detailOf, widgetLatest } from "../fixtures/PackagesCatalog.js"

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
