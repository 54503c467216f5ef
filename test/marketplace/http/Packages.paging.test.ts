/**
 * Keyset pagination of GET /api/v1/packages and /search over a bulk catalogue:
 * walks in every order, cursors bound to their query, tampered cursors refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import {
  at,
  byteOrder,
  type Document,
  expectValidationFailed,
  type FixturePackage,
  namesOf,
  packageOf,
  type Params,
  queryString,
  version,
  walk
} from "../fixtures/Listing.js"

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
