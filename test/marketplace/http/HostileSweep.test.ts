/**
 * Every route of the marketplace's contract, tried from outside with hostile input by a signed-in admin (so each
 * request passes the credential checks and reaches the route's own decoding): malformed, wrongly typed, deeply
 * nested and oddly encoded bodies, hostile path segments and query strings. Each answer is the `{error: {code,
 * message, requestId}}` envelope with a status below 500 that the route declares (or a refusal of the request
 * itself), and nothing readable through the API has changed afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { HttpApi, OpenApi } from "@effect/platform"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { type Answer, bodies, queries, refusalProblem, segments, send, wrongTypedBody } from "../../support/HostileInput.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"
import { account, cookie, fromSite } from "../fixtures/Accounts.js"
import { at, type Document, version } from "../fixtures/Listing.js"

interface Route {
  readonly method: string
  readonly path: string
  readonly declared: ReadonlyArray<number>
}

const routes: Array<Route> = []
HttpApi.reflect(MarketplaceApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, errors }) => {
    routes.push({ method: endpoint.method, path: endpoint.path.replace(/:(\w+)/g, "{$1}"), declared: [...errors.keys()] })
  }
})

const wrongTyped = wrongTypedBody(OpenApi.fromApi(MarketplaceApi))

/** Existing records, so a hostile body reaches the route's own checks rather than a 404. */
const existing = (path: string, name: string) =>
  name === "name" ? "alpha" : name === "number" ? "1" : name === "slug"
    ? path.includes("/publishers/") ? "acme" : path.includes("/collections/") ? "picks" : path.includes("/categories/")
      ? "tools"
      : "about"
    : "unknown1"

const problem = (answer: Answer, route: Route): string | undefined => {
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text.slice(0, 200)}`
  if (answer.status < 400) return undefined
  return refusalProblem(answer, route.declared, (body) =>
    typeof body?.error?.code === "string" && typeof body.error.message === "string" &&
    typeof body.error.requestId === "string")
}

const document: Document = {
  categories: [{ slug: "tools", name: "Tools" }],
  publishers: [{ slug: "acme", name: "Acme" }],
  packages: [{ name: "alpha", displayName: "Alpha", curationStatus: "listed", updatedAt: at(1), versions: [version("1.0.0", 1)] }],
  collections: [{ slug: "picks", title: "Picks", items: [{ packageName: "alpha" }] }],
  pages: [{
    slug: "about",
    kind: "custom",
    title: "About",
    revisions: [{
      document: {
        schemaVersion: 1,
        layout: { id: "default", version: 1 },
        meta: { title: "About", description: "", locale: "en", noindex: false },
        blocks: []
      }
    }]
  }]
}

/** What the sweep must leave as it was, read by the same admin. */
const readBack = [
  "/api/v1/me",
  "/api/v1/packages/alpha",
  "/api/v1/me/tokens",
  "/api/v1/publishers",
  "/api/v1/admin/pages",
  "/api/v1/submissions",
  "/api/v1/curation/collections/picks",
  "/api/v1/collections"
]

describe("hostile input on every marketplace route", () => {
  let server: RunningMarketplace
  const admin = account("sweep@example.com", "admin")

  beforeAll(async () => {
    server = await startMarketplace("sqlite", document, { setup: admin.setup })
  })
  afterAll(() => server.close())

  it("answers each in its envelope with a declared status and changes nothing", async () => {
    const headers = { ...cookie(admin.account.session), ...fromSite }
    const read = () => Promise.all(readBack.map((path) => send(`${server.baseUrl}${path}`, "GET", headers)))
    const before = await read()
    expect(before.map((answer) => answer.status)).toEqual(readBack.map(() => 200))
    const found: Array<string> = []
    let tried = 0
    for (const route of routes) {
      const fill = (value?: string) => route.path.replace(/\{(\w+)\}/g, (_, name: string) => value ?? existing(route.path, name))
      const attempt = async (label: string, path: string, body?: string | Buffer, contentType?: string) => {
        const answer = await send(`${server.baseUrl}${path}`, route.method, headers, body, contentType)
        tried++
        const wrong = problem(answer, route)
        if (wrong !== undefined) found.push(`${route.method} ${route.path} with ${label}: ${wrong}`)
      }
      const undecodable = route.method === "GET" ? undefined : "{"
      if (route.method !== "GET") {
        for (const [label, body, contentType] of bodies) await attempt(label, fill(), body, contentType)
        const wrong = wrongTyped(route.method, route.path)
        if (wrong !== undefined) await attempt(`every field of a wrong type ${wrong}`, fill(), wrong, "application/json")
      }
      if (route.path.includes("{")) {
        for (const [label, value] of segments) await attempt(`${label} in the path`, fill(value), undecodable, "application/json")
      }
      for (const query of queries) await attempt(`query ${query.slice(0, 30)}`, fill() + query, undecodable, "application/json")
    }
    expect(found).toEqual([])
    expect(tried).toBeGreaterThan(routes.length * 4)
    const after = await read()
    expect(after.map((answer) => [answer.status, answer.text])).toEqual(before.map((answer) => [answer.status, answer.text]))
  }, 120_000)
})
