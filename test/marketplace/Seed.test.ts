import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { ImportDocument } from "../../schema/marketplace/Import.js"
import { type CurationStatus, packageNamePattern, publicStatuses, versionPattern } from "../../schema/marketplace/Package.js"
import type { Block } from "../../schema/marketplace/Page.js"
import { demoCatalog } from "../../src/marketplace/seed/Demo.js"
import { syntheticPackages, syntheticTaxonomy } from "../../src/marketplace/seed/Synthetic.js"

const now = new Date("2026-11-01T00:00:00Z")
const decode = (input: unknown) => Schema.decodeUnknownSync(ImportDocument)(input, { onExcessProperty: "error" })

const allStatuses: ReadonlyArray<CurationStatus> = ["unreviewed", "listed", "featured", "hidden", "rejected"]
const blockTypes = [
  "heading", "paragraph", "rich_text", "list", "image", "code", "quote", "callout", "button", "divider", "table",
  "section", "columns", "column", "hero", "faq", "package_grid", "collection_ref", "embed"
]

const walk = (blocks: ReadonlyArray<Block>, visit: (block: Block, ancestors: ReadonlyArray<string>) => void, ancestors: ReadonlyArray<string> = []): void => {
  for (const block of blocks) {
    visit(block, ancestors)
    walk(block.children ?? [], visit, [...ancestors, block.type])
  }
}

describe("demo catalogue", () => {
  const doc = decode(demoCatalog(now))
  const names = new Set(doc.packages.map((p) => p.name))
  const statusOf = new Map(doc.packages.map((p) => [p.name, p.curationStatus]))

  it("decodes strictly and is deterministic", () => {
    expect(demoCatalog(now)).toStrictEqual(demoCatalog(now))
  })

  it("has enough packages, categories and publishers", () => {
    expect(doc.packages.length).toBeGreaterThanOrEqual(150)
    expect(names.size).toBe(doc.packages.length)
    expect(doc.categories.length).toBeGreaterThanOrEqual(8)
    const categorySlugs = new Set(doc.categories.map((c) => c.slug))
    const usedCategories = new Set(doc.packages.map((p) => p.categorySlug))
    expect(usedCategories.size).toBeGreaterThanOrEqual(8)
    for (const slug of usedCategories) expect(categorySlugs.has(slug ?? "")).toBe(true)

    const publisherSlugs = new Set(doc.publishers.map((p) => p.slug))
    expect(publisherSlugs.size).toBeGreaterThanOrEqual(4)
    expect(doc.publishers.some((p) => p.verified)).toBe(true)
    expect(doc.publishers.some((p) => !p.verified)).toBe(true)
    for (const pkg of doc.packages) expect(publisherSlugs.has(pkg.publisher ?? "")).toBe(true)
  })

  it("covers every curation status, mostly listed", () => {
    const counts = new Map<string, number>()
    for (const pkg of doc.packages) counts.set(pkg.curationStatus, (counts.get(pkg.curationStatus) ?? 0) + 1)
    for (const status of allStatuses) expect(counts.get(status) ?? 0, status).toBeGreaterThan(0)
    expect(counts.get("listed") ?? 0).toBeGreaterThan(doc.packages.length / 2)
  })

  it("uses valid scoped and unscoped names", () => {
    for (const name of names) {
      expect(name).toMatch(packageNamePattern)
      expect(name).toBe(name.toLowerCase())
    }
    expect([...names].some((n) => n.startsWith("@"))).toBe(true)
    expect([...names].some((n) => !n.startsWith("@"))).toBe(true)
    expect(names.has("@acme/notes-widget")).toBe(true)
  })

  it("gives every package 1-6 dated versions with facets, checks and integrity", () => {
    for (const pkg of doc.packages) {
      expect(pkg.versions.length).toBeGreaterThanOrEqual(1)
      expect(pkg.versions.length).toBeLessThanOrEqual(6)
      expect(pkg.keywords.length).toBeGreaterThanOrEqual(2)
      expect(pkg.keywords.length).toBeLessThanOrEqual(6)
      expect(pkg.description.length).toBeGreaterThan(20)
      let previous = ""
      for (const version of pkg.versions) {
        expect(version.version).toMatch(versionPattern)
        expect(version.publishedAt > previous).toBe(true)
        expect(version.indexedAt >= version.publishedAt).toBe(true)
        expect(new Date(version.indexedAt).getTime()).toBeLessThan(now.getTime())
        previous = version.publishedAt
        expect(version.registryIntegrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
        expect(version.facets.length).toBeGreaterThan(0)
        expect(version.securityChecks.length).toBeGreaterThan(0)
        expect(version.platforms.length).toBeGreaterThan(0)
        for (const facet of version.facets) {
          expect(["tool", "widget", "theme", "skill", "service"]).toContain(facet.kind)
          if (facet.kind === "theme" || facet.kind === "skill") expect(facet.isolation).toBe("declarative")
          if (facet.kind === "widget") expect(facet.widgetId).not.toBeNull()
        }
        for (const preview of version.previews) expect(preview.url).toMatch(/^https:\/\//)
      }
    }
    const versions = doc.packages.flatMap((p) => p.versions)
    expect(versions.some((v) => v.version.includes("-beta.1"))).toBe(true)
    expect(versions.some((v) => v.readmeHtml === null)).toBe(true)
    expect(versions.some((v) => v.readmeHtml !== null)).toBe(true)
    const kinds = new Set(versions.flatMap((v) => v.facets.map((f) => f.kind)))
    expect([...kinds].sort()).toStrictEqual(["service", "skill", "theme", "tool", "widget"])
    const permissionKinds = new Set(versions.flatMap((v) => v.permissions.map((p) => p.kind)))
    expect(permissionKinds.size).toBe(6)
    const previewKinds = new Set(versions.flatMap((v) => v.previews.map((p) => p.kind)))
    expect(previewKinds.size).toBe(3)
    const results = new Set(versions.flatMap((v) => v.securityChecks.map((c) => c.result)))
    expect([...results].sort()).toStrictEqual(["fail", "pass", "warn"])
  })

  it("spreads common search words over a handful of descriptions each", () => {
    for (const word of ["calendar", "markdown", "weather", "invoice", "map"]) {
      const hits = doc.packages.filter((p) => new RegExp(`\\b${word}\\b`, "i").test(p.description)).length
      expect(hits, word).toBeGreaterThanOrEqual(3)
      expect(hits, word).toBeLessThanOrEqual(20)
    }
  })

  it("has collections that name catalogue packages", () => {
    expect(doc.collections.length).toBeGreaterThanOrEqual(3)
    expect(doc.collections.some((c) => !c.published)).toBe(true)
    expect(doc.collections.some((c) => c.items.some((i) => i.note !== null))).toBe(true)
    for (const collection of doc.collections) {
      expect(collection.items.length).toBeGreaterThanOrEqual(4)
      expect(collection.items.length).toBeLessThanOrEqual(10)
      for (const item of collection.items) expect(names.has(item.packageName), item.packageName).toBe(true)
    }
    const items = doc.collections.flatMap((c) => c.items)
    expect(items.some((i) => !publicStatuses.includes(statusOf.get(i.packageName) ?? "listed"))).toBe(true)
  })

  it("has the required pages and revisions", () => {
    const page = (slug: string) => doc.pages.find((p) => p.slug === slug)
    expect(["landing", "custom"]).toContain(page("about")?.kind)
    expect(page("legal/terms")?.kind).toBe("legal")
    expect(page("docs/getting-started/install")?.kind).toBe("docs")

    const draftOnly = doc.pages.filter((p) => p.revisions.every((r) => r.publishedAt === null))
    expect(draftOnly.length).toBeGreaterThan(0)
    const draftOverPublished = doc.pages.filter((p) => {
      const [older, newer] = p.revisions
      return p.revisions.length === 2 && older?.publishedAt !== null && newer?.publishedAt === null &&
        (older?.createdAt ?? "") < (newer?.createdAt ?? "")
    })
    expect(draftOverPublished.length).toBeGreaterThan(0)
  })

  it("uses every block type, nests them and keeps ids unique", () => {
    const seenTypes = new Set<string>()
    const ids: Array<string> = []
    let nested = false
    for (const page of doc.pages) {
      for (const revision of page.revisions) {
        const { document } = revision
        expect(document.layout).toStrictEqual({ id: "standard", version: 1 })
        expect(document.meta.locale).toBe("en")
        walk(document.blocks, (block, ancestors) => {
          seenTypes.add(block.type)
          ids.push(block.id)
          expect(block.version).toBe(1)
          if (block.type === "list" && ancestors.join(">").endsWith("section>columns>column")) nested = true
          if (block.type === "package_grid") {
            for (const name of block.props["packageNames"] as ReadonlyArray<string>) expect(names.has(name)).toBe(true)
          }
        })
      }
    }
    expect([...seenTypes].sort()).toStrictEqual([...blockTypes].sort())
    expect(new Set(ids).size).toBe(ids.length)
    expect(nested).toBe(true)
  })
})

describe("synthetic packages", () => {
  const options = { seed: 42, start: 0, count: 500, now }

  it("decodes strictly against its taxonomy", () => {
    const doc = decode({ ...syntheticTaxonomy(), packages: syntheticPackages(options) })
    expect(doc.packages).toHaveLength(500)
    const categories = new Set(doc.categories.map((c) => c.slug))
    const publishers = new Set(doc.publishers.map((p) => p.slug))
    expect(categories.size).toBe(12)
    expect(publishers.size).toBe(200)
    for (const pkg of doc.packages) {
      expect(categories.has(pkg.categorySlug ?? "")).toBe(true)
      expect(publishers.has(pkg.publisher ?? "")).toBe(true)
      expect(pkg.versions.length).toBeGreaterThanOrEqual(1)
      expect(pkg.versions.length).toBeLessThanOrEqual(3)
      for (const version of pkg.versions) expect(new Date(version.indexedAt).getTime()).toBeLessThan(now.getTime())
    }
    expect(doc.packages.filter((p) => p.name.startsWith("@")).length).toBe(Math.ceil(500 / 7))
  })

  it("is deterministic and independent of chunking", () => {
    expect(syntheticPackages(options)).toStrictEqual(syntheticPackages(options))
    const whole = syntheticPackages({ ...options, start: 100, count: 200 })
    const chunks = [
      ...syntheticPackages({ ...options, start: 100, count: 50 }),
      ...syntheticPackages({ ...options, start: 150, count: 150 })
    ]
    expect(chunks).toStrictEqual(whole)
    expect(syntheticPackages({ ...options, seed: 43 })).not.toStrictEqual(syntheticPackages(options))
  })

  it("keeps names unique across adjacent chunks", () => {
    const names = [
      ...syntheticPackages({ ...options, start: 0, count: 1000 }),
      ...syntheticPackages({ ...options, start: 1000, count: 1000 })
    ].map((p) => p.name)
    expect(new Set(names).size).toBe(2000)
  })

  it("has mostly listed packages and a skewed vocabulary", () => {
    const packages = syntheticPackages({ ...options, count: 20_000 })
    const share = (status: CurationStatus) => packages.filter((p) => p.curationStatus === status).length / packages.length
    expect(share("listed")).toBeGreaterThan(0.82)
    expect(share("listed")).toBeLessThan(0.88)
    expect(share("featured")).toBeGreaterThan(0.03)
    expect(share("featured")).toBeLessThan(0.07)
    for (const status of ["unreviewed", "hidden", "rejected"] as const) expect(share(status)).toBeGreaterThan(0)

    const frequency = new Map<string, number>()
    for (const pkg of packages) {
      for (const word of new Set((pkg.description ?? "").toLowerCase().match(/[a-z]+/g))) {
        frequency.set(word, (frequency.get(word) ?? 0) + 1)
      }
    }
    // "for" and "and" join every description; they are not vocabulary.
    frequency.delete("for")
    frequency.delete("and")
    const counts = [...frequency.values()].sort((a, b) => b - a)
    // Zipf-Mandelbrot: the top terms are in a real share of packages but not nearly all of
    // them (as in a real catalogue), the median term in very few.
    expect(counts[0] ?? 0).toBeGreaterThan(packages.length / 20)
    expect(counts[0] ?? 0).toBeLessThan(packages.length / 4)
    expect(counts[Math.floor(counts.length / 2)] ?? 0).toBeLessThan(packages.length / 100)
    expect(frequency.size).toBeGreaterThan(1500)
  })

  // Its speed is the benchmark's to measure (docs/benchmarks.md), not a timed assertion's: a test run shares the
  // process's CPU with other test files.
  it("generates 100,000 packages from any start, each name once", () => {
    const packages = syntheticPackages({ ...options, start: 1_000_000, count: 100_000 })
    expect(packages).toHaveLength(100_000)
    expect(new Set(packages.map((p) => p.name)).size).toBe(100_000)
  })
})
