/**
 * The package read routes' bodies are byte for byte what their schemas encode.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { PackageDetail, PackagePage, SearchPage, VersionList } from "../../../schema/marketplace/Package.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { pathName } from "../fixtures/Listing.js"
import { catalog } from "../fixtures/PackagesCatalog.js"

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
