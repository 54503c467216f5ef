import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"

// ---------------------------------------------------------------------------
// Fixture

type Status = "unreviewed" | "listed" | "featured" | "hidden" | "rejected"

const publisher = { slug: "acme", name: "Acme Tools", verified: true }

/** One package with one version; every field the summary shows is fixed. */
const pkg = (name: string, curationStatus: Status, categorySlug: string | null, day: number) => ({
  name,
  displayName: `Display ${name}`,
  description: `About ${name}`,
  publisher: publisher.slug,
  categorySlug,
  curationStatus,
  keywords: [`kw-${name}`],
  updatedAt: `2024-03-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  versions: [{
    version: `1.${day}.0`,
    publishedAt: `2024-02-${String(day).padStart(2, "0")}T08:00:00.000Z`,
    indexedAt: `2024-02-${String(day).padStart(2, "0")}T09:00:00.000Z`,
    registryIntegrity: `sha512-${name}`
  }]
})
type FixturePackage = ReturnType<typeof pkg>

const packages = [
  pkg("tools-listed", "listed", "tools", 1),
  pkg("tools-featured", "featured", "tools", 2),
  pkg("tools-unreviewed", "unreviewed", "tools", 3),
  pkg("tools-hidden", "hidden", "tools", 4),
  pkg("tools-rejected", "rejected", "tools", 5),
  pkg("audio-listed", "listed", "audio", 6),
  pkg("audio-hidden", "hidden", "audio", 7),
  pkg("zeta-rejected", "rejected", "zeta", 8),
  pkg("uncategorised", "listed", null, 9)
]
const byName = new Map(packages.map((p) => [p.name, p]))

/** The package summary the API must return for a fixture package. */
const summaryOf = (name: string) => {
  const p: FixturePackage = byName.get(name)!
  const version = p.versions[0]!
  return {
    name: p.name,
    displayName: p.displayName,
    description: p.description,
    latestVersion: version.version,
    publisher,
    categorySlug: p.categorySlug,
    curationStatus: p.curationStatus,
    keywords: p.keywords,
    indexedAt: version.indexedAt,
    updatedAt: p.updatedAt
  }
}

const categories = [
  { slug: "audio", name: "Audio", description: "Sound and music", position: 2 },
  { slug: "tools", name: "Tools", description: "Developer tools", position: 1 },
  { slug: "empty", name: "Empty", description: "Nothing here yet", position: 1 },
  { slug: "zeta", name: "Zeta", description: "Only a rejected package", position: 0 }
]

const collection = (slug: string, published: boolean, position: number, items: ReadonlyArray<string>) => ({
  slug,
  title: `Title ${slug}`,
  description: `Description ${slug}`,
  published,
  position,
  items: items.map((packageName) => ({ packageName }))
})

// Editorial order differs from name order and from publish order on purpose.
const starterItems = ["tools-featured", "audio-listed", "tools-hidden", "tools-listed", "tools-unreviewed", "tools-rejected"]

const collections = [
  collection("starter", true, 1, starterItems),
  collection("alpha", true, 1, ["uncategorised"]),
  collection("first", true, 0, []),
  collection("draft", false, 0, ["tools-listed"]),
  collection("private-only", true, 2, ["tools-hidden", "audio-hidden", "tools-unreviewed"])
]

const document = { categories, publishers: [publisher], packages, collections }

// ---------------------------------------------------------------------------
// Helpers

const category = (slug: string, packageCount: number) => {
  const { name, description } = categories.find((c) => c.slug === slug)!
  return { slug, name, description, packageCount }
}

const collectionSummary = (slug: string) => {
  const { description, title } = collections.find((c) => c.slug === slug)!
  return { slug, title, description }
}

const expectedCategories = [
  category("zeta", 0),
  category("empty", 0),
  category("tools", 2),
  category("audio", 1)
]

const badSlugs = [
  ["uppercase", "Bad"],
  ["double hyphen", "a--b"],
  ["leading hyphen", "-a"],
  ["underscore", "a_b"],
  ["65 characters", "a".repeat(65)]
] as const

const expectValidationFailed = (
  response: Awaited<ReturnType<RunningMarketplace["request"]>>,
  path: string
) => {
  expect(response.status).toBe(400)
  expect(response.body.error.code).toBe("validation_failed")
  expect(response.body.error.requestId).toBe(response.headers.get("x-request-id"))
  expect(response.body.error.details.issues[0].path).toBe(path)
}

/** 404 not_found from the lookup: the route matched, so the message is not the unknown-route one. */
const expectNotFound = (response: Awaited<ReturnType<RunningMarketplace["request"]>>, unknownRouteMessage: string) => {
  expect(response.status).toBe(404)
  expect(response.body).toEqual({
    error: { code: "not_found", message: expect.any(String), requestId: response.headers.get("x-request-id") }
  })
  expect(response.body.error.message).not.toBe(unknownRouteMessage)
}

// ---------------------------------------------------------------------------

describe.each(dialects)("catalog routes on %s", (dialect) => {
  let server: RunningMarketplace
  let unknownRouteMessage: string
  beforeAll(async () => {
    server = await startMarketplace(dialect, document)
    unknownRouteMessage = (await server.request("/api/v1/nope")).body.error.message
  })
  afterAll(() => server.close())

  describe("GET /categories", () => {
    it("lists every category by position then slug, counting public packages only", async () => {
      const { body, status } = await server.request("/api/v1/categories")
      expect(status).toBe(200)
      expect(body).toEqual({ items: expectedCategories })
    })

    it("decodes through the typed client", async () => {
      const list = await server.client((client) => client.catalog.categories())
      expect(list).toEqual({ items: expectedCategories })
    })
  })

  describe("GET /categories/{slug}", () => {
    it.each([
      ["tools", 2],
      ["audio", 1],
      ["empty", 0],
      ["zeta", 0]
    ] as const)("answers category %s with packageCount %i", async (slug, count) => {
      const { body, status } = await server.request(`/api/v1/categories/${slug}`)
      expect(status).toBe(200)
      expect(body).toEqual(category(slug, count))
    })

    it("answers 404 not_found for an unknown category", async () => {
      expectNotFound(await server.request("/api/v1/categories/nope"), unknownRouteMessage)
    })

    it("accepts a 64-character slug (404 when absent)", async () => {
      expectNotFound(await server.request(`/api/v1/categories/${"a".repeat(64)}`), unknownRouteMessage)
    })

    it.each(badSlugs)("refuses a slug with %s: 400 validation_failed naming slug", async (_, slug) => {
      expectValidationFailed(await server.request(`/api/v1/categories/${slug}`), "slug")
    })
  })

  describe("GET /collections", () => {
    const expected = { items: ["first", "alpha", "starter", "private-only"].map(collectionSummary) }

    it("lists published collections only, by position then slug, as {slug, title, description}", async () => {
      const { body, status } = await server.request("/api/v1/collections")
      expect(status).toBe(200)
      expect(body).toEqual(expected)
    })

    it("decodes through the typed client", async () => {
      expect(await server.client((client) => client.catalog.collections())).toEqual(expected)
    })
  })

  describe("GET /collections/{slug}", () => {
    const starter = {
      ...collectionSummary("starter"),
      packages: ["tools-featured", "audio-listed", "tools-listed"].map(summaryOf)
    }

    it("returns public packages only, in editorial order, as full summaries", async () => {
      const { body, status } = await server.request("/api/v1/collections/starter")
      expect(status).toBe(200)
      expect(body).toEqual(starter)
    })

    it("decodes through the typed client", async () => {
      const result = await server.client((client) => client.catalog.collection({ path: { slug: "starter" } }))
      expect(result).toEqual(starter)
    })

    it.each([
      ["alpha", ["uncategorised"]],
      ["first", []],
      ["private-only", []]
    ] as const)("returns collection %s with packages %j", async (slug, names) => {
      const { body, status } = await server.request(`/api/v1/collections/${slug}`)
      expect(status).toBe(200)
      expect(body).toEqual({ ...collectionSummary(slug), packages: names.map(summaryOf) })
    })

    it.each([
      ["an unpublished collection", "draft"],
      ["an unknown collection", "nope"],
      ["an absent 64-character slug", "a".repeat(64)]
    ])("answers 404 not_found for %s", async (_, slug) => {
      expectNotFound(await server.request(`/api/v1/collections/${slug}`), unknownRouteMessage)
    })

    it.each(badSlugs)("refuses a slug with %s: 400 validation_failed naming slug", async (_, slug) => {
      expectValidationFailed(await server.request(`/api/v1/collections/${slug}`), "slug")
    })
  })
})
