/**
 * The page-builder admin API on both databases, through the typed client
 * against the real server: creating pages, drafts, publishing and unpublishing
 * guarded by If-Match (428 without, 412 when stale, exactly one of concurrent
 * writes from one version wins), what the public route serves, validation of
 * documents, scopes, and the audit entries each write leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  Conflict,
  Forbidden,
  NotFound,
  PreconditionRequired
} from "../../../schema/marketplace/Errors.js"
import type { BlockInput } from "../../../schema/marketplace/PageAdmin.js"
import { dialects } from "../../support/Databases.js"
import { type MarketplaceClient, type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"
import { typedAs, typedFailureAs } from "../fixtures/Typed.js"

const document = (title: string, text: string, blocks?: ReadonlyArray<unknown>) => ({
  schemaVersion: 1 as const,
  layout: { id: "default", version: 2 },
  meta: { title, description: `About ${title}`, locale: "en", noindex: false },
  // Invalid blocks travel too, through raw requests.
  blocks: (blocks ?? [{ id: "p1", type: "paragraph", version: 1, props: { text } }]) as ReadonlyArray<BlockInput>
})

const imported = {
  pages: [{
    slug: "about",
    kind: "landing",
    title: "About us",
    revisions: [{ document: document("About", "Imported words."), publishedAt: "2024-05-01T12:00:00Z" }]
  }]
}

const admin = account("pages-admin@example.com", "admin", {
  editor: ["pages:read", "pages:write"],
  publisher: ["pages:read", "pages:publish"],
  reader: ["pages:read"],
  auditor: ["admin"]
})

const draftRequest = (slug: string, ifMatch: string | undefined, doc: ReturnType<typeof document>) =>
  (client: MarketplaceClient) =>
    client.pageAdmin.saveDraft({
      path: { slug },
      headers: ifMatch === undefined ? {} : { "if-match": ifMatch },
      payload: { document: doc },
      withResponse: true
    })

describe.each(dialects)("the page builder on %s", (dialect) => {
  let server: RunningMarketplace
  const editor = () => admin.account.tokens.editor!
  const publisher = () => admin.account.tokens.publisher!

  beforeAll(async () => {
    server = await startMarketplace(dialect, imported, { setup: admin.setup })
  })
  afterAll(() => server.close())

  const publicPage = (slug: string) => server.request(`/api/v1/pages/${encodeURIComponent(slug)}`)
  const revisionCount = async (slug: string) =>
    (await server.query(rows("page_revisions", `page_id = (SELECT id FROM pages WHERE slug = '${slug}')`))).length

  it("creates a page at version 1, answering 201 with its ETag; the same slug again is 409", async () => {
    const [page, response] = await typedAs(server, editor(), (client) =>
      client.pageAdmin.create({ payload: { slug: "guides/start", kind: "docs", title: "Start" }, withResponse: true }))
    expect(response.status).toBe(201)
    expect(response.headers["etag"]).toBe(`"1"`)
    expect(page).toMatchObject({
      slug: "guides/start",
      kind: "docs",
      title: "Start",
      version: 1,
      publishedRevision: null,
      latestRevision: null
    })
    expect(page.id).toMatch(/^pg_/)
    const again = await typedFailureAs(server, editor(), (client) =>
      client.pageAdmin.create({ payload: { slug: "guides/start", kind: "custom", title: "Other" } }))
    expect(again).toBeInstanceOf(Conflict)
    expect((await typedAs(server, editor(), (client) => client.pageAdmin.get({ path: { slug: "guides/start" } }))).title)
      .toBe("Start")
  })

  it("walks a page through draft, publish, a second draft, rollback and unpublish, each guarded by the ETag", async () => {
    const slug = "walk"
    await typedAs(server, editor(), (client) => client.pageAdmin.create({ payload: { slug, kind: "custom", title: "Walk" } }))

    const [first, firstResponse] = await typedAs(server, editor(), draftRequest(slug, `"1"`, document("One", "First words.")))
    expect(firstResponse.status).toBe(201)
    expect(firstResponse.headers["etag"]).toBe(`"2"`)
    expect(first.revision).toMatchObject({ number: 1, publishedAt: null, document: document("One", "First words.") })
    expect(first.page).toMatchObject({ version: 2, publishedRevision: null, latestRevision: { number: 1 } })
    // A draft is never served.
    expect((await publicPage(slug)).status).toBe(404)

    const [published, publishedResponse] = await typedAs(server, publisher(), (client) =>
      client.pageAdmin.publish({
        path: { slug },
        headers: { "if-match": `"2"` },
        payload: { revisionNumber: 1 },
        withResponse: true
      }))
    expect(publishedResponse.headers["etag"]).toBe(`"3"`)
    expect(published.publishedRevision).toMatchObject({ number: 1, id: first.revision.id })
    const served = await publicPage(slug)
    expect(served.status).toBe(200)
    expect(served.body).toMatchObject({
      page: { slug, kind: "custom", title: "Walk" },
      revisionId: first.revision.id,
      revisionNumber: 1,
      document: document("One", "First words.")
    })

    await typedAs(server, editor(), draftRequest(slug, `"3"`, document("Two", "Second words.")))
    // The published revision stays what the public route serves while a newer draft exists.
    expect((await publicPage(slug)).body.revisionNumber).toBe(1)

    await typedAs(server, publisher(), (client) =>
      client.pageAdmin.publish({ path: { slug }, headers: { "if-match": `"4"` }, payload: { revisionNumber: 2 } }))
    expect((await publicPage(slug)).body).toMatchObject({ revisionNumber: 2, document: document("Two", "Second words.") })

    // Publishing an older revision again is a rollback.
    await typedAs(server, publisher(), (client) =>
      client.pageAdmin.publish({ path: { slug }, headers: { "if-match": `"5"` }, payload: { revisionNumber: 1 } }))
    expect((await publicPage(slug)).body.revisionNumber).toBe(1)

    const [unpublished, unpublishedResponse] = await typedAs(server, publisher(), (client) =>
      client.pageAdmin.unpublish({ path: { slug }, headers: { "if-match": `"6"` }, withResponse: true }))
    expect(unpublishedResponse.headers["etag"]).toBe(`"7"`)
    expect(unpublished).toMatchObject({ version: 7, publishedRevision: null, latestRevision: { number: 2 } })
    expect((await publicPage(slug)).status).toBe(404)
    expect((await server.request(`/api/v1/pages/${slug}?format=md`)).status).toBe(404)

    const again = await typedFailureAs(server, publisher(), (client) =>
      client.pageAdmin.unpublish({ path: { slug }, headers: { "if-match": `"7"` } }))
    expect(again).toBeInstanceOf(Conflict)

    const revisions = await typedAs(server, editor(), (client) => client.pageAdmin.revisions({ path: { slug } }))
    expect(revisions.items.map((revision) => revision.number)).toEqual([2, 1])
    expect(revisions.items.every((revision) => revision.publishedAt !== null)).toBe(true)
    const second = await typedAs(server, editor(), (client) =>
      client.pageAdmin.revision({ path: { slug, number: 2 } }))
    expect(second.document).toEqual(document("Two", "Second words."))
  })

  it("edits an imported page from version 1 and serves its new revision once published", async () => {
    const page = await typedAs(server, editor(), (client) => client.pageAdmin.get({ path: { slug: "about" } }))
    expect(page).toMatchObject({ version: 1, publishedRevision: { number: 1 }, latestRevision: { number: 1 } })
    const [saved] = await typedAs(server, editor(), draftRequest("about", `"1"`, document("About", "New words.")))
    expect(saved.revision.number).toBe(2)
    expect((await publicPage("about")).body.document.blocks[0].props.text).toBe("Imported words.")
    await typedAs(server, publisher(), (client) =>
      client.pageAdmin.publish({ path: { slug: "about" }, headers: { "if-match": `"2"` }, payload: { revisionNumber: 2 } }))
    expect((await publicPage("about")).body.document.blocks[0].props.text).toBe("New words.")
  })

  describe("If-Match", () => {
    const slug = "guarded"
    beforeAll(async () => {
      await typedAs(server, editor(), (client) => client.pageAdmin.create({ payload: { slug, kind: "custom", title: "G" } }))
    })

    it("is required: 428 precondition_required, nothing stored", async () => {
      const refused = await typedFailureAs(server, editor(), draftRequest(slug, undefined, document("G", "x")))
      expect(refused).toBeInstanceOf(PreconditionRequired)
      const raw = await call(server, {
        method: "POST",
        path: `/api/v1/admin/pages/${slug}/publish`,
        headers: bearer(publisher()),
        body: { revisionNumber: 1 }
      })
      expect(raw.status).toBe(428)
      expect(raw.body.error).toEqual({
        code: "precondition_required",
        message: expect.any(String),
        requestId: raw.headers.get("x-request-id")
      })
      expect(await revisionCount(slug)).toBe(0)
    })

    it.each([
      ["a stale version", `"7"`],
      ["a weak tag", `W/"1"`],
      ["*", "*"],
      ["no tag at all", "1"]
    ])("refuses %s: 412 precondition_failed with the current ETag, nothing stored", async (_, ifMatch) => {
      const raw = await call(server, {
        method: "POST",
        path: `/api/v1/admin/pages/${slug}/revisions`,
        headers: { ...bearer(editor()), "if-match": ifMatch },
        body: { document: document("G", "x") }
      })
      expect(raw.status).toBe(412)
      expect(raw.body.error).toMatchObject({ code: "precondition_failed", details: { currentETag: `"1"` } })
      expect(await revisionCount(slug)).toBe(0)
    })

    it.each([
      ["an If-Match over 200 characters", { "if-match": Array.from({ length: 60 }, () => `"1"`).join(",") }, { document: document("G", "x") }, "if-match"],
      ["a body without a document", { "if-match": `"1"` }, {}, "document"]
    ])("refuses %s: 400 validation_failed, nothing stored", async (_, headers, body, path) => {
      const raw = await call(server, {
        method: "POST",
        path: `/api/v1/admin/pages/${slug}/revisions`,
        headers: { ...bearer(editor()), ...headers },
        body
      })
      expect(raw.status).toBe(400)
      expect(raw.body.error.code).toBe("validation_failed")
      expect(raw.body.error.details.issues[0].path).toBe(path)
      expect(await revisionCount(slug)).toBe(0)
    })

    it("accepts a list naming the current version", async () => {
      const [, response] = await typedAs(server, editor(), draftRequest(slug, `"9", "1"`, document("G", "listed")))
      expect(response.status).toBe(201)
      expect(response.headers["etag"]).toBe(`"2"`)
    })

    it("lets exactly one of concurrent writes from the same version win", async () => {
      const before = await typedAs(server, editor(), (client) => client.pageAdmin.get({ path: { slug } }))
      const tag = `"${before.version}"`
      const attempts = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        call(server, {
          method: "POST",
          path: `/api/v1/admin/pages/${slug}/revisions`,
          headers: { ...bearer(editor()), "if-match": tag },
          body: { document: document("G", `racer ${i}`) }
        })))
      expect(attempts.map((attempt) => attempt.status).sort()).toEqual([201, 412, 412, 412, 412, 412, 412, 412])
      const after = await typedAs(server, editor(), (client) => client.pageAdmin.get({ path: { slug } }))
      expect(after.version).toBe(before.version + 1)
      expect(await revisionCount(slug)).toBe(2)
    })

    it("leaves the version alone when publishing a revision that does not exist (404)", async () => {
      const before = await typedAs(server, publisher(), (client) => client.pageAdmin.get({ path: { slug } }))
      const refused = await typedFailureAs(server, publisher(), (client) =>
        client.pageAdmin.publish({
          path: { slug },
          headers: { "if-match": `"${before.version}"` },
          payload: { revisionNumber: 99 }
        }))
      expect(refused).toBeInstanceOf(NotFound)
      const after = await typedAs(server, publisher(), (client) => client.pageAdmin.get({ path: { slug } }))
      expect(after.version).toBe(before.version)
      expect(after.publishedRevision).toBeNull()
    })

    it("answers 404 for a page that does not exist", async () => {
      const refused = await typedFailureAs(server, editor(), draftRequest("nope", `"1"`, document("N", "n")))
      expect(refused).toBeInstanceOf(NotFound)
    })
  })

  describe("documents", () => {
    const slug = "validated"
    beforeAll(async () => {
      await typedAs(server, editor(), (client) => client.pageAdmin.create({ payload: { slug, kind: "custom", title: "V" } }))
    })

    const block = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "paragraph", version: 1, props: {}, ...extra })

    it.each([
      ["schemaVersion 2", { ...document("V", "v"), schemaVersion: 2 }, "document.schemaVersion"],
      ["a fractional block version", document("V", "v", [block("a", { version: 1.5 })]), "document.blocks.0.version"],
      ["a block version 0", document("V", "v", [block("a", { version: 0 })]), "document.blocks.0.version"],
      ["a layout without a version", { ...document("V", "v"), layout: { id: "default" } }, "document.layout.version"],
      ["an upper-case block type", document("V", "v", [block("a", { type: "Hero" })]), "document.blocks.0.type"],
      ["a repeated block id", document("V", "v", [block("a"), block("b", { children: [block("a")] })]), "document.blocks.1.children.0.id"],
      ["blocks without props", document("V", "v", [{ id: "a", type: "paragraph", version: 1 }]), "document.blocks.0.props"]
    ])("refuses %s: 400 validation_failed naming where, nothing stored", async (_, doc, path) => {
      const raw = await call(server, {
        method: "POST",
        path: `/api/v1/admin/pages/${slug}/revisions`,
        headers: { ...bearer(editor()), "if-match": `"1"` },
        body: { document: doc }
      })
      expect(raw.status).toBe(400)
      expect(raw.body.error.code).toBe("validation_failed")
      expect(raw.body.error.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
      expect(await revisionCount(slug)).toBe(0)
      const page = await typedAs(server, editor(), (client) => client.pageAdmin.get({ path: { slug } }))
      expect(page.version).toBe(1)
    })

    it("refuses a slug outside the page slug format when creating", async () => {
      const raw = await call(server, {
        method: "POST",
        path: "/api/v1/admin/pages",
        headers: bearer(editor()),
        body: { slug: "Bad/Slug", kind: "custom", title: "x" }
      })
      expect(raw.status).toBe(400)
      expect(raw.body.error.details.issues[0].path).toBe("slug")
    })
  })

  describe("scopes", () => {
    it.each([
      ["a reader saving a draft", "reader", draftRequest("about", `"1"`, document("x", "x"))],
      ["an editor publishing", "editor", (client: MarketplaceClient) =>
        client.pageAdmin.publish({ path: { slug: "about" }, headers: { "if-match": `"1"` }, payload: { revisionNumber: 1 } })],
      ["a publisher creating", "publisher", (client: MarketplaceClient) =>
        client.pageAdmin.create({ payload: { slug: "scoped", kind: "custom", title: "x" } })]
    ] as const)("refuses %s: 403 forbidden", async (_, token, use) => {
      const refused = await typedFailureAs(server, admin.account.tokens[token]!, use as (client: MarketplaceClient) => Effect.Effect<unknown, unknown>)
      expect(refused).toBeInstanceOf(Forbidden)
      expect((await server.query(rows("pages", "slug = 'scoped'"))).length).toBe(0)
    })

    it("needs a credential: 401 without one", async () => {
      const raw = await server.request("/api/v1/admin/pages")
      expect(raw.status).toBe(401)
    })
  })

  it("records each write in the audit log with the page's state before and after", async () => {
    const slug = "audited"
    await typedAs(server, editor(), (client) => client.pageAdmin.create({ payload: { slug, kind: "custom", title: "A" } }))
    await typedAs(server, editor(), draftRequest(slug, `"1"`, document("A", "a")))
    await typedAs(server, publisher(), (client) =>
      client.pageAdmin.publish({ path: { slug }, headers: { "if-match": `"2"` }, payload: { revisionNumber: 1 } }))
    // A refused write leaves nothing.
    await typedFailureAs(server, editor(), draftRequest(slug, `"1"`, document("A", "stale")))
    const log = await typedAs(server, admin.account.tokens.auditor!, (client) =>
      client.admin.audit({ urlParams: { target: slug } }))
    expect(log.items.map((entry) => entry.action)).toEqual(["page.publish", "page.draft", "page.create"])
    expect(log.items.every((entry) => entry.actorId === admin.account.id && entry.targetKind === "page")).toBe(true)
    expect(log.items[0]).toMatchObject({
      before: { version: 2, publishedRevision: null, latestRevision: 1 },
      after: { version: 3, publishedRevision: 1, latestRevision: 1 }
    })
    expect(log.items[2]).toMatchObject({ before: null, after: { version: 1, publishedRevision: null, latestRevision: null } })
  })
})
