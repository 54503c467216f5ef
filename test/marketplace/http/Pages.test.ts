import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"

// ---------------------------------------------------------------------------
// Fixture

interface BlockInput {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly props: Record<string, unknown>
  readonly children?: ReadonlyArray<BlockInput>
}

const block = (id: string, type: string, props: Record<string, unknown>, children?: ReadonlyArray<BlockInput>) => ({
  id,
  type,
  version: 1,
  props,
  ...(children === undefined ? {} : { children })
})

const pageDocument = (title: string, blocks: ReadonlyArray<BlockInput>) => ({
  schemaVersion: 1 as const,
  layout: { id: "default", version: 2 },
  meta: { title, description: `Description of ${title}`, locale: "en", noindex: false },
  blocks
})

const paragraphs = (title: string, text: string) => pageDocument(title, [block("p1", "paragraph", { text })])

const aboutDocument = pageDocument("About Clark", [
  block("h1", "heading", { level: 1, text: "Our mission" }),
  block("l1", "list", { items: ["First item", "Second item"] }, [block("l2", "list", { items: ["Nested item"] })]),
  block("s1", "section", { title: "Details" }, [block("p1", "paragraph", { text: "Child paragraph text" })]),
  block("t1", "table", { columns: ["Plan", "Price"], rows: [["Free", "0"], ["Pro", "10"]] })
])

const published = (document: ReturnType<typeof pageDocument>, publishedAt: string) => ({ document, publishedAt })
const draft = (document: ReturnType<typeof pageDocument>) => ({ document })

const pages = [
  { slug: "about", kind: "landing", title: "About us", revisions: [published(aboutDocument, "2024-05-01T12:00:00Z")] },
  {
    slug: "legal/terms",
    kind: "legal",
    title: "Terms",
    revisions: [published(paragraphs("Terms of use", "Be kind."), "2024-05-02T12:00:00Z")]
  },
  {
    slug: "docs/a/b",
    kind: "docs",
    title: "Deep doc",
    revisions: [published(paragraphs("Deep doc", "Deep text."), "2024-05-03T12:00:00Z")]
  },
  { slug: "draft-only", kind: "custom", title: "Draft only", revisions: [draft(paragraphs("Draft", "Unpublished."))] },
  {
    slug: "evolving",
    kind: "custom",
    title: "Evolving",
    revisions: [
      published(paragraphs("Evolving v1", "First published words."), "2024-04-01T00:00:00Z"),
      published(paragraphs("Evolving v2", "Second published words."), "2024-04-02T00:00:00Z"),
      draft(paragraphs("Evolving draft", "Draft secret words."))
    ]
  }
]

// The longest slugs the contract accepts: 160 characters, flat and nested.
const longSlug = "l".repeat(160)
const longNestedSlug = `${"m".repeat(79)}/${"n".repeat(80)}`
const longPages = [longSlug, longNestedSlug].map((slug) => ({
  slug,
  kind: "custom",
  title: "Long slug",
  revisions: [published(paragraphs("Long slug", "Long."), "2024-05-04T12:00:00Z")]
}))

const document = { pages: [...pages, ...longPages] }

// ---------------------------------------------------------------------------
// Helpers

/** The exact JSON body for a page's revision `number` (1-based). */
const expectedPage = (slug: string, number: number) => {
  const page = document.pages.find((p) => p.slug === slug)!
  const revision = page.revisions[number - 1] as { document: unknown; publishedAt: string }
  return {
    page: { id: expect.stringMatching(/^pg_/), slug, kind: page.kind, title: page.title },
    revisionId: expect.stringMatching(/^rev_/),
    revisionNumber: number,
    publishedAt: new Date(revision.publishedAt).toISOString(),
    document: revision.document
  }
}

type Response = Awaited<ReturnType<RunningMarketplace["request"]>>

/** 404 not_found from the page lookup: the route matched, so the message is not the unknown-route one. */
const expectPageNotFound = (response: Response, unknownRouteMessage: string) => {
  expect(response.status).toBe(404)
  expect(response.body).toEqual({
    error: { code: "not_found", message: expect.any(String), requestId: response.headers.get("x-request-id") }
  })
  expect(response.body.error.message).not.toBe(unknownRouteMessage)
}

const expectValidationFailed = (response: Response, path: string) => {
  expect(response.status).toBe(400)
  expect(response.body.error.code).toBe("validation_failed")
  expect(response.body.error.requestId).toBe(response.headers.get("x-request-id"))
  expect(response.body.error.details.issues[0].path).toBe(path)
}

// ---------------------------------------------------------------------------

describe.each(dialects)("GET /pages/{slug} on %s", (dialect) => {
  let server: RunningMarketplace
  let unknownRouteMessage: string
  beforeAll(async () => {
    server = await startMarketplace(dialect, document)
    unknownRouteMessage = (await server.request("/api/v1/nope")).body.error.message
  })
  afterAll(() => server.close())

  describe("json", () => {
    it.each(["", "?format=json"])("returns exactly the published page (query %j)", async (query) => {
      const { body, headers, status } = await server.request(`/api/v1/pages/about${query}`)
      expect(status).toBe(200)
      expect(headers.get("content-type")).toMatch(/^application\/json/)
      expect(body).toEqual(expectedPage("about", 1))
    })

    it("answers the same revision with and without format=json", async () => {
      const [plain, json] = await Promise.all([
        server.request("/api/v1/pages/about"),
        server.request("/api/v1/pages/about?format=json")
      ])
      expect(json.body).toEqual(plain.body)
    })

    it.each([
      ["legal%2Fterms", "legal/terms"],
      ["docs%2Fa%2Fb", "docs/a/b"]
    ])("serves the nested slug %s", async (encoded, slug) => {
      const { body, status } = await server.request(`/api/v1/pages/${encoded}`)
      expect(status).toBe(200)
      expect(body).toEqual(expectedPage(slug, 1))
    })

    it("decodes through the typed client", async () => {
      const page = await server.client((client) => client.pages.page({ path: { slug: "about" }, urlParams: {} }))
      expect(page).toEqual(expectedPage("about", 1))
    })
  })

  describe("md", () => {
    it("answers text/markdown with the rendering of the blocks", async () => {
      const { headers, status, text } = await server.request("/api/v1/pages/about?format=md")
      expect(status).toBe(200)
      expect(headers.get("content-type")).toMatch(/^text\/markdown/)
      const lines = text.split("\n")
      expect(lines[0]).toBe("# About Clark")
      for (
        const line of [
          "Description of About Clark",
          "## Our mission",
          "- First item",
          "- Second item",
          "  - Nested item",
          "## Details",
          "Child paragraph text",
          "| Plan | Price |",
          "| --- | --- |",
          "| Pro | 10 |"
        ]
      ) expect(lines).toContain(line)
    })
  })

  describe("drafts", () => {
    it.each(["", "?format=md"])("a page with only a draft revision is 404 (query %j)", async (query) => {
      expectPageNotFound(await server.request(`/api/v1/pages/draft-only${query}`), unknownRouteMessage)
    })

    it("serves the newest published revision when the newest revision is a draft", async () => {
      const { body, status, text } = await server.request("/api/v1/pages/evolving")
      expect(status).toBe(200)
      expect(body).toEqual(expectedPage("evolving", 2))
      expect(text).not.toContain("Draft secret words")
    })

    it("never renders the draft's text as Markdown", async () => {
      const { status, text } = await server.request("/api/v1/pages/evolving?format=md")
      expect(status).toBe(200)
      expect(text).toBe("# Evolving v2\n\nDescription of Evolving v2\n\nSecond published words.\n")
    })
  })

  describe("validation", () => {
    it("refuses format=html: 400 validation_failed naming format", async () => {
      expectValidationFailed(await server.request("/api/v1/pages/about?format=html"), "format")
    })

    it.each([
      ["uppercase", "Bad"],
      ["empty segment", "a%2F%2Fb"],
      ["trailing slash", "a%2F"],
      ["leading slash", "%2Fa"],
      ["161 characters", "a".repeat(161)]
    ])("refuses a slug with %s: 400 validation_failed naming slug", async (_, slug) => {
      expectValidationFailed(await server.request(`/api/v1/pages/${slug}`), "slug")
    })

    it.each([
      ["160-character slug", longSlug],
      ["160-character nested slug", longNestedSlug]
    ])("serves a page with a %s", async (_, slug) => {
      const { body, status } = await server.request(`/api/v1/pages/${encodeURIComponent(slug)}`)
      expect(status).toBe(200)
      expect(body).toEqual(expectedPage(slug, 1))
    })

    it.each([
      ["unknown slug", "nope"],
      ["absent 160-character slug", "a".repeat(160)],
      ["absent 160-character nested slug", `${"a".repeat(79)}%2F${"b".repeat(80)}`]
    ])("accepts an %s and answers 404 from the page lookup", async (_, slug) => {
      expectPageNotFound(await server.request(`/api/v1/pages/${slug}`), unknownRouteMessage)
    })
  })
})
