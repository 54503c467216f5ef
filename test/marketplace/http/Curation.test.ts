/**
 * Curation routes on both dialects: status and featured transitions with the
 * curation log, collection commands with every bound of the Limits table, and
 * refusals that change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SqlCatalogStore from "../../../layers/marketplace/sql/SqlCatalogStore.js"
import * as SqlCuration from "../../../layers/marketplace/sql/SqlCuration.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { CurationStore } from "../../../services/marketplace/Curation.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { account, bearer, call } from "../fixtures/Accounts.js"
import { at, type Document, expectNotFound, expectValidationFailed, pathName, version } from "../fixtures/Listing.js"

const document: Document = {
  categories: [{ slug: "tools", name: "Tools", description: "Tools", position: 0 }],
  publishers: [{ slug: "acme", name: "Acme", verified: true }],
  packages: [
    ["alpha", "listed"],
    ["@acme/beta", "unreviewed"],
    ["gamma", "featured"],
    ["delta", "hidden"],
    ["epsilon", "rejected"],
    ...Array.from({ length: 10 }, (_, i) => [`rush-${i}`, "listed"])
  ].map(([name, curationStatus], i) => ({
    name: name!,
    displayName: name!,
    publisher: "acme",
    categorySlug: "tools",
    curationStatus: curationStatus as "listed",
    updatedAt: at(i),
    versions: [version("1.0.0", i)]
  }))
}

describe.each(dialects)("curation on %s", (dialect) => {
  let server: RunningMarketplace
  const curator = account("cora@example.com", "admin", { curate: ["packages:curate"] })

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, { setup: curator.setup })
  })
  afterAll(() => server.close())

  const token = () => bearer(curator.account.tokens.curate!)
  const post = (path: string, body: unknown) =>
    call(server, { method: "POST", path: `/api/v1/curation${path}`, body, headers: token() })
  const setStatus = (name: string, body: unknown) => post(`/packages/${pathName(name)}/status`, body)
  const setFeatured = (name: string, body: unknown) => post(`/packages/${pathName(name)}/featured`, body)
  const command = (slug: string, body: unknown) => post(`/collections/${slug}`, body)
  const state = (slug: string) =>
    call(server, { method: "GET", path: `/api/v1/curation/collections/${slug}`, headers: token() })

  const withStores = <A>(use: (stores: { curation: CurationStore["Type"]; catalog: CatalogStore["Type"] }) => Effect.Effect<A>) =>
    server.query(
      Effect.gen(function*() {
        return yield* use({ curation: yield* CurationStore, catalog: yield* CatalogStore })
      }).pipe(Effect.provide(Layer.mergeAll(SqlCuration.layer, SqlCatalogStore.layer)))
    )
  const log = (name: string) => withStores(({ curation }) => curation.log(name))
  it("sets a status, logs who changed it from what to what and why, and hides it from public reads", async () => {
    const hidden = await setStatus("alpha", { status: "hidden", reason: "spam reports" })
    expect(hidden.status).toBe(200)
    expect(hidden.body).toEqual({ name: "alpha", curationStatus: "hidden" })
    expectNotFound(await server.request("/api/v1/packages/alpha"))

    const listed = await setStatus("alpha", { status: "listed" })
    expect(listed.body).toEqual({ name: "alpha", curationStatus: "listed" })
    expect((await server.request("/api/v1/packages/alpha")).status).toBe(200)

    expect(await log("alpha")).toEqual([
      { packageName: "alpha", actorId: curator.account.id, from: "listed", to: "hidden", reason: "spam reports", at: expect.any(String) },
      { packageName: "alpha", actorId: curator.account.id, from: "hidden", to: "listed", reason: null, at: expect.any(String) }
    ])
  })

  it.each(["unreviewed", "listed", "featured", "hidden", "rejected"] as const)(
    "moves a package to %s from any status",
    async (status) => {
      const response = await setStatus("epsilon", { status })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ name: "epsilon", curationStatus: status })
      expect((await log("epsilon")).at(-1)).toMatchObject({ to: status })
    }
  )

  it("accepts a scoped name encoded in the path", async () => {
    const response = await setStatus("@acme/beta", { status: "listed", reason: "r".repeat(500) })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ name: "@acme/beta", curationStatus: "listed" })
    expect((await log("@acme/beta")).at(-1)).toMatchObject({ from: "unreviewed", to: "listed", reason: "r".repeat(500) })
  })

  it("features from any status and un-features to a plain listing, leaving other statuses alone", async () => {
    expect((await setFeatured("delta", { featured: true })).body).toEqual({ name: "delta", curationStatus: "featured" })
    expect((await setFeatured("delta", { featured: false })).body).toEqual({ name: "delta", curationStatus: "listed" })
    await setStatus("delta", { status: "hidden" })
    const before = await log("delta")
    const unchanged = await setFeatured("delta", { featured: false })
    expect(unchanged.status).toBe(200)
    expect(unchanged.body).toEqual({ name: "delta", curationStatus: "hidden" })
    expect(await log("delta")).toEqual(before)
    expect(before.map((entry) => [entry.from, entry.to])).toEqual([
      ["hidden", "featured"],
      ["featured", "listed"],
      ["listed", "hidden"]
    ])
  })

  it("answers 404 for a package that does not exist and logs nothing", async () => {
    expectNotFound(await setStatus("no-such-package", { status: "listed" }))
    expectNotFound(await setFeatured("no-such-package", { featured: true }))
    expect(await log("no-such-package")).toEqual([])
  })

  it("refuses bad bodies with validation_failed naming the field and changes nothing", async () => {
    const before = await log("gamma")
    expectValidationFailed(await setStatus("gamma", { status: "banned" }), "status")
    expectValidationFailed(await setStatus("gamma", {}), "status")
    expectValidationFailed(await setStatus("gamma", { status: "hidden", reason: "r".repeat(501) }), "reason")
    expectValidationFailed(await setFeatured("gamma", {}), "featured")
    expectValidationFailed(await setFeatured("gamma", { featured: "yes" }), "featured")
    expectValidationFailed(await setStatus("Not A Name", { status: "listed" }), "name")
    expect(await log("gamma")).toEqual(before)
    expect((await server.request("/api/v1/packages/gamma")).body.curationStatus).toBe("featured")
  })

  describe("collections", () => {
    it("creates with the documented defaults, and refuses to create it twice", async () => {
      expectNotFound(await state("fresh"))
      const created = await command("fresh", { action: "create", title: "Fresh" })
      expect(created.status).toBe(200)
      expect(created.body).toEqual({ slug: "fresh", title: "Fresh", description: "", published: false, position: 0, items: [] })
      expect((await state("fresh")).body).toEqual(created.body)

      const again = await command("fresh", { action: "create", title: "Other" })
      expect(again.status).toBe(409)
      expect(again.body.error.code).toBe("conflict")
      expect((await state("fresh")).body.title).toBe("Fresh")
    })

    it("updates only the fields given, and publishing shows it publicly", async () => {
      await command("shown", { action: "create", title: "Shown", description: "d", position: 3 })
      expectNotFound(await server.request("/api/v1/collections/shown"))
      const updated = await command("shown", { action: "update", published: true, position: 10000 })
      expect(updated.body).toEqual({
        slug: "shown",
        title: "Shown",
        description: "d",
        published: true,
        position: 10000,
        items: []
      })
      expect((await server.request("/api/v1/collections/shown")).status).toBe(200)
      const renamed = await command("shown", { action: "update", title: "Renamed", description: "" })
      expect(renamed.body).toMatchObject({ title: "Renamed", description: "", published: true, position: 10000 })
    })

    it("adds items at the end with notes, includes non-public ones, removes and reorders them", async () => {
      await command("picks", { action: "create", title: "Picks" })
      await command("picks", { action: "add_item", packageName: "gamma", note: "the best" })
      await command("picks", { action: "add_item", packageName: "@acme/beta" })
      const added = await command("picks", { action: "add_item", packageName: "epsilon", note: "n".repeat(300) })
      expect(added.body.items).toEqual([
        { packageName: "gamma", position: 0, note: "the best" },
        { packageName: "@acme/beta", position: 1, note: null },
        { packageName: "epsilon", position: 2, note: "n".repeat(300) }
      ])

      const readded = await command("picks", { action: "add_item", packageName: "gamma", note: "still the best" })
      expect(readded.body.items[0]).toEqual({ packageName: "gamma", position: 0, note: "still the best" })
      expect(readded.body.items).toHaveLength(3)

      const removed = await command("picks", { action: "remove_item", packageName: "@acme/beta" })
      expect(removed.body.items).toEqual([
        { packageName: "gamma", position: 0, note: "still the best" },
        { packageName: "epsilon", position: 1, note: "n".repeat(300) }
      ])

      const reordered = await command("picks", { action: "reorder", packageNames: ["epsilon", "gamma"] })
      expect(reordered.status).toBe(200)
      expect(reordered.body.items).toEqual([
        { packageName: "epsilon", position: 0, note: "n".repeat(300) },
        { packageName: "gamma", position: 1, note: "still the best" }
      ])
    })

    it("answers 10 simultaneous add_items with 200 each and positions 0..9", async () => {
      await command("rush", { action: "create", title: "Rush" })
      const names = Array.from({ length: 10 }, (_, i) => `rush-${i}`)
      const responses = await Promise.all(names.map((packageName) => command("rush", { action: "add_item", packageName })))
      expect(responses.map((response) => response.status)).toEqual(names.map(() => 200))
      const items: Array<{ packageName: string; position: number }> = (await state("rush")).body.items
      expect(items.map((item) => item.position)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      expect(items.map((item) => item.packageName).sort()).toEqual([...names].sort())
    })

    it("answers simultaneous add_items of the same packages with 200 each and one item per package", async () => {
      await command("twice", { action: "create", title: "Twice" })
      const names = ["rush-0", "rush-1", "rush-2", "rush-3", "rush-4"]
      const responses = await Promise.all(
        [...names, ...names].map((packageName) => command("twice", { action: "add_item", packageName }))
      )
      expect(responses.map((response) => response.status)).toEqual([...names, ...names].map(() => 200))
      const items: Array<{ packageName: string; position: number }> = (await state("twice")).body.items
      expect(items.map((item) => item.position)).toEqual([0, 1, 2, 3, 4])
      expect(items.map((item) => item.packageName).sort()).toEqual(names)
    })

    it("keeps positions gap-free when removes and adds run at the same time", async () => {
      await command("churn", { action: "create", title: "Churn" })
      for (const name of ["rush-0", "rush-1", "rush-2", "rush-3"]) await command("churn", { action: "add_item", packageName: name })
      const responses = await Promise.all([
        command("churn", { action: "remove_item", packageName: "rush-1" }),
        command("churn", { action: "add_item", packageName: "rush-5" }),
        command("churn", { action: "remove_item", packageName: "rush-2" }),
        command("churn", { action: "add_item", packageName: "rush-6" })
      ])
      expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200])
      const items: Array<{ packageName: string; position: number }> = (await state("churn")).body.items
      expect(items.map((item) => item.position)).toEqual([0, 1, 2, 3])
      expect(items.slice(0, 2).map((item) => item.packageName)).toEqual(["rush-0", "rush-3"])
    })

    it("refuses a NUL or a lone surrogate in any text with 400 validation_failed and stores nothing", async () => {
      const nul = await command("nul", { action: "create", title: "a\u0000b" })
      expect(nul.status).toBe(400)
      expect(nul.body.error).toMatchObject({ code: "validation_failed", details: { issues: [{ path: "title" }] } })
      expectNotFound(await state("nul"))

      await command("texts", { action: "create", title: "Texts" })
      await command("texts", { action: "add_item", packageName: "alpha", note: "kept" })
      const before = (await state("texts")).body
      for (const body of [
        { action: "update", description: "\u0000" },
        { action: "add_item", packageName: "alpha", note: "x\u0000" },
        { action: "add_item", packageName: "alpha", note: "\ud800" },
        { action: "update", title: "\udfff tail" }
      ]) {
        const response = await command("texts", body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.body.error.code).toBe("validation_failed")
      }
      expect((await state("texts")).body).toEqual(before)
      const reason = await setStatus("alpha", { status: "hidden", reason: "spam\u0000" })
      expect(reason.status).toBe(400)
      expect((await server.request("/api/v1/packages/alpha")).status).toBe(200)
    })

    it("answers 404 for a missing collection, a missing package, or an item not in the collection", async () => {
      await command("small", { action: "create", title: "Small" })
      for (const body of [
        { action: "update", title: "x" },
        { action: "add_item", packageName: "alpha" },
        { action: "remove_item", packageName: "alpha" },
        { action: "reorder", packageNames: ["alpha"] }
      ]) expectNotFound(await command("missing", body))
      expectNotFound(await command("small", { action: "add_item", packageName: "no-such-package" }))
      expectNotFound(await command("small", { action: "remove_item", packageName: "alpha" }))
      expect((await state("small")).body.items).toEqual([])
      expectNotFound(await state("missing"))
    })

    it("refuses a reorder that does not name exactly the current items, naming the difference", async () => {
      await command("ordered", { action: "create", title: "Ordered" })
      for (const name of ["alpha", "gamma", "delta"]) await command("ordered", { action: "add_item", packageName: name })
      const before = (await state("ordered")).body

      const response = await command("ordered", { action: "reorder", packageNames: ["gamma", "alpha", "epsilon"] })
      expect(response.status).toBe(400)
      expect(response.body.error).toMatchObject({
        code: "validation_failed",
        details: { missing: ["delta"], unexpected: ["epsilon"], repeated: [] }
      })
      expect(response.body.error.message).toContain("delta")
      expect(response.body.error.message).toContain("epsilon")

      const repeated = await command("ordered", { action: "reorder", packageNames: ["gamma", "alpha", "delta", "alpha"] })
      expect(repeated.status).toBe(400)
      expect(repeated.body.error.details).toMatchObject({ missing: [], unexpected: [], repeated: ["alpha"] })
      expect((await state("ordered")).body).toEqual(before)
    })

    it("enforces every bound of the Limits table and changes nothing", async () => {
      await command("bounded", { action: "create", title: "t".repeat(120), description: "d".repeat(600), position: 10000 })
      const before = (await state("bounded")).body
      expect(before).toMatchObject({ title: "t".repeat(120), description: "d".repeat(600), position: 10000 })
      const refusals: ReadonlyArray<readonly [unknown, string]> = [
        [{ action: "update", title: "" }, "title"],
        [{ action: "update", title: "t".repeat(121) }, "title"],
        [{ action: "update", description: "d".repeat(601) }, "description"],
        [{ action: "update", position: 10001 }, "position"],
        [{ action: "update", position: -1 }, "position"],
        [{ action: "update", position: 1.5 }, "position"],
        [{ action: "update", published: "yes" }, "published"],
        [{ action: "add_item", packageName: "alpha", note: "n".repeat(301) }, "note"],
        [{ action: "add_item", packageName: "Not A Name" }, "packageName"],
        [{ action: "add_item", packageName: "a".repeat(215) }, "packageName"],
        [{ action: "add_item" }, "packageName"],
        [{ action: "remove_item", packageName: "" }, "packageName"],
        [{ action: "reorder", packageNames: [] }, "packageNames"],
        [{ action: "reorder", packageNames: Array.from({ length: 201 }, (_, i) => `p${i}`) }, "packageNames"]
      ]
      for (const [body, path] of refusals) {
        const response = await command("bounded", body)
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(response.body.error.code).toBe("validation_failed")
        expect(response.body.error.details.issues.some((issue: { path: string }) => issue.path.endsWith(path))).toBe(true)
      }
      expect((await command("bounded", { action: "create" })).status).toBe(400)
      expect((await command("bounded", { action: "rename", title: "x" })).status).toBe(400)
      expectValidationFailed(await command("x".repeat(65), { action: "create", title: "x" }), "slug")
      expect((await state("bounded")).body).toEqual(before)
    })
  })
})
