/**
 * The authorization matrix, generated from the contract: every route behind
 * the Authentication middleware, called with each kind of credential, answers
 * the documented status and code. Each route has its own account, so a
 * successful DELETE /me removes nobody else.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { HttpApi, type HttpApiMiddleware } from "@effect/platform"
import { Effect, Redacted } from "effect"
import type { Scope } from "../../../schema/marketplace/Account.js"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { Authentication } from "../../../schema/marketplace/Security.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import * as TokenFormat from "../../../services/marketplace/TokenFormat.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace, testOrigin } from "../../support/MarketplaceServer.js"
import { bearer, call, cookie, fromSite } from "../fixtures/Accounts.js"
import { at, type Document, version } from "../fixtures/Listing.js"

interface ProtectedRoute {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly declared: ReadonlyArray<number>
}

const protectedRoutes: Array<ProtectedRoute> = []
HttpApi.reflect(MarketplaceApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint, errors, group, middleware }) => {
    if (middleware.has(Authentication as unknown as HttpApiMiddleware.TagClassAny)) {
      protectedRoutes.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        declared: [...errors.keys()]
      })
    }
  }
})

const pageDocument = {
  schemaVersion: 1 as const,
  layout: { id: "default", version: 1 },
  meta: { title: "About", description: "", locale: "en", noindex: false },
  blocks: []
}

/**
 * A request to each protected route that succeeds for a credential allowed to make it, or answers `answer` once
 * the credential is through (a guarded write without If-Match, an unknown id); `body` may be made per request.
 */
const samples: Record<string, {
  readonly params?: Record<string, string>
  readonly body?: unknown
  readonly answer?: readonly [number, string | undefined]
}> = {
  "account.me": {},
  "account.deleteMe": { body: { confirm: "DELETE" } },
  "account.myPackages": {},
  "curation.setStatus": { params: { name: "alpha" }, body: { status: "listed" } },
  "curation.setFeatured": { params: { name: "alpha" }, body: { featured: true } },
  "curation.collection": { params: { slug: "picks" } },
  "curation.collectionCommand": { params: { slug: "picks" }, body: { action: "update", title: "Picks" } },
  "pageAdmin.list": {},
  "pageAdmin.create": {
    body: () => ({ slug: `matrix-${Math.random().toString(36).slice(2)}`, kind: "custom", title: "Matrix" }),
    answer: [201, undefined]
  },
  "pageAdmin.get": { params: { slug: "about" } },
  "pageAdmin.revisions": { params: { slug: "about" } },
  "pageAdmin.revision": { params: { slug: "about", number: "1" } },
  "pageAdmin.saveDraft": { params: { slug: "about" }, body: { document: pageDocument }, answer: [428, "precondition_required"] },
  "pageAdmin.publish": { params: { slug: "about" }, body: { revisionNumber: 1 }, answer: [428, "precondition_required"] },
  "pageAdmin.unpublish": { params: { slug: "about" }, answer: [428, "precondition_required"] },
  "credentials.tokens": {},
  "credentials.createToken": { body: { name: "matrix", scopes: ["account:read"] }, answer: [201, undefined] },
  "credentials.revokeToken": { params: { id: "tok_unknown" }, answer: [404, "not_found"] },
  "credentials.devices": {},
  "credentials.revokeDevice": { params: { id: "dev_unknown" }, answer: [404, "not_found"] },
  "credentials.grants": {},
  "credentials.revokeGrant": { params: { id: "grt_unknown" }, answer: [404, "not_found"] },
  "admin.suspend": { params: { id: "usr_unknown" }, body: { suspended: false }, answer: [404, "not_found"] },
  "admin.audit": {},
  "publish.submit": { body: { packageName: "alpha" }, answer: [202, undefined] },
  "publish.submissions": {},
  "publish.submission": { params: { id: "sub_unknown" }, answer: [404, "not_found"] },
  "publish.reindex": { params: { name: "alpha" }, body: {}, answer: [202, undefined] },
  // Every account here is an admin, which acts as an owner of any publisher; "acme" has no homepage.
  "publishers.list": {},
  "publishers.create": {
    body: () => ({ slug: `matrix-${Math.random().toString(36).slice(2)}`, name: "Matrix" }),
    answer: [201, undefined]
  },
  "publishers.get": { params: { slug: "acme" } },
  "publishers.update": { params: { slug: "acme" }, body: { name: "Acme" } },
  "publishers.addMember": {
    params: { slug: "acme" },
    body: { email: "nobody@example.com", role: "member" },
    answer: [404, "not_found"]
  },
  "publishers.removeMember": { params: { slug: "acme", userId: "usr_unknown" }, answer: [404, "not_found"] },
  "publishers.challenge": { params: { slug: "acme" }, answer: [409, "conflict"] },
  "publishers.verify": { params: { slug: "acme" }, body: { method: "dns" }, answer: [409, "conflict"] },
  "publishers.claims": { params: { slug: "acme" } },
  "publishers.claim": { params: { slug: "acme" }, body: { packageName: "not-in-catalogue" }, answer: [404, "not_found"] },
  "publishers.release": { params: { slug: "acme", name: "alpha" }, answer: [404, "not_found"] }
}

/** What a route needs beyond a valid credential. */
const needs = (route: ProtectedRoute): "nothing" | "scope" | "session" =>
  route.id === "account.me" ? "nothing" : route.id === "account.deleteMe" ? "session" : "scope"

type Expected = readonly [number, string | undefined]
/** What a credential allowed to make the request gets. */
const ok = (route: ProtectedRoute): Expected => samples[route.id]?.answer ?? [200, undefined]
const unauthorized: Expected = [401, "unauthorized"]
const forbidden: Expected = [403, "forbidden"]
const isMutation = (route: ProtectedRoute) => route.method !== "GET"

interface Issued {
  session: string
  expired: string
  revoked: string
  wrongScope: string
  rightScope: string
  oauthElsewhere: string
  oauthHere: string
}

const allowedScopes: ReadonlyArray<Scope> = [
  "packages:read",
  "packages:curate",
  "packages:submit",
  "account:read",
  "account:write",
  "pages:read",
  "pages:write",
  "pages:publish",
  "publishers:read",
  "publishers:write",
  "admin"
]

/** Each case: the headers it sends, and what every route must answer. */
const cases: ReadonlyArray<
  readonly [string, (issued: Issued) => Record<string, string>, (route: ProtectedRoute) => Expected]
> = [
  ["no credential", () => ({}), () => unauthorized],
  ["a malformed token", () => bearer("cmk_not-a-token"), () => unauthorized],
  ["an expired token", (issued) => bearer(issued.expired), () => unauthorized],
  ["a revoked token", (issued) => bearer(issued.revoked), () => unauthorized],
  ["a token without the scope", (issued) => bearer(issued.wrongScope), (route) =>
    needs(route) === "nothing" ? ok(route) : forbidden],
  ["an OAuth token for another audience", (issued) => bearer(issued.oauthElsewhere), () => unauthorized],
  ["the session cookie from another site", (issued) => ({ ...cookie(issued.session), origin: "https://evil.test" }), (
    route
  ) => isMutation(route) ? forbidden : ok(route)],
  ["the session cookie from a page of another site", (issued) => ({
    ...cookie(issued.session),
    referer: "https://evil.test/page"
  }), (route) => isMutation(route) ? forbidden : ok(route)],
  ["an API token with the scope", (issued) => bearer(issued.rightScope), (route) =>
    needs(route) === "session" ? forbidden : ok(route)],
  ["an OAuth token for this API", (issued) => bearer(issued.oauthHere), (route) =>
    needs(route) === "session" ? forbidden : ok(route)],
  ["the session cookie from the site", (issued) => ({ ...cookie(issued.session), ...fromSite }), ok]
]

const document: Document = {
  publishers: [{ slug: "acme", name: "Acme" }],
  packages: [{ name: "alpha", displayName: "Alpha", curationStatus: "listed", updatedAt: at(1), versions: [version("1.0.0", 1)] }],
  collections: [{ slug: "picks", title: "Picks", items: [{ packageName: "alpha" }] }],
  pages: [{ slug: "about", kind: "custom", title: "About", revisions: [{ document: pageDocument }] }]
}

it("covers every route behind the Authentication middleware, each declaring 401 and 403", () => {
  expect(protectedRoutes.map((route) => route.id).sort()).toEqual(Object.keys(samples).sort())
  for (const route of protectedRoutes) expect(route.declared).toEqual(expect.arrayContaining([401, 403]))
})

describe.each(dialects)("authorization matrix on %s", (dialect) => {
  let server: RunningMarketplace
  const issued: Record<string, Issued> = {}

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, {
      setup: Effect.gen(function*() {
        const credentials = yield* Credentials
        for (const route of protectedRoutes) {
          const email = `${route.id}@example.com`
          yield* credentials.createUser({ email, name: route.id, role: "admin" })
          const token = (scopes: ReadonlyArray<Scope>, expiresAt?: Date) =>
            Effect.map(credentials.issueApiToken({ email, scopes, expiresAt }), Redacted.value)
          const oauth = (audience: string) =>
            Effect.map(
              credentials.issueOAuthToken({
                email,
                scopes: allowedScopes,
                audience,
                clientId: "matrix",
                expiresAt: new Date(Date.now() + 3_600_000)
              }),
              Redacted.value
            )
          const revoked = yield* credentials.issueApiToken({ email, scopes: allowedScopes })
          yield* credentials.revokeApiToken(revoked)
          issued[route.id] = {
            session: Redacted.value(yield* credentials.issueSession(email)),
            expired: yield* token(allowedScopes, new Date(Date.now() - 1000)),
            revoked: Redacted.value(revoked),
            // A scope no route needs.
            wrongScope: yield* token(["media:write"]),
            rightScope: yield* token(allowedScopes),
            oauthElsewhere: yield* oauth("https://elsewhere.test/api/v1"),
            oauthHere: yield* oauth(`${testOrigin}/api/v1`)
          }
        }
      })
    })
  })
  afterAll(() => server.close())

  describe.each(protectedRoutes.map((route) => [route.id, route] as const))("%s", (_, route) => {
    const sample = samples[route.id]!
    const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(sample.params?.[name] ?? ""))

    it.each(cases.map(([name, headers, expected]) => [name, headers, expected] as const))(
      "with %s",
      async (_, headers, expected) => {
        const sent = headers(issued[route.id]!)
        const body = typeof sample.body === "function" ? sample.body() : sample.body
        const response = await call(server, { method: route.method, path, body, headers: sent })
        const [status, code] = expected(route)
        expect(response.status).toBe(status)
        if (code !== undefined) {
          expect(response.body.error).toEqual({
            code,
            message: expect.any(String),
            requestId: response.headers.get("x-request-id")
          })
        }
        for (const value of Object.values(sent)) {
          const token = value.replace(/^Bearer /, "").replace(/^app\.session_token=/, "")
          if (TokenFormat.parse(token) !== undefined) expect(response.text).not.toContain(token)
        }
      }
    )
  })
})
