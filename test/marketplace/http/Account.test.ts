/**
 * Account routes on both dialects: the listings of the caller's publishers,
 * and deleting an account: a signed-in session only, confirmation required,
 * 409 for the last owner of a shared publisher, everything tied to the
 * account removed in one go and nothing else (checked in the database).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import * as SqlAccounts from "../../../layers/marketplace/sql/SqlAccounts.js"
import { AccountStore, type PublisherRole } from "../../../services/marketplace/Accounts.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace, testOrigin } from "../../support/MarketplaceServer.js"
import { type Account, account, bearer, call, cookie, fromSite, rows } from "../fixtures/Accounts.js"
import { at, type Document, expectValidationFailed, version } from "../fixtures/Listing.js"

const publishers = ["solo", "shared", "joint", "stranded", "other", "ginas"] as const
const document: Document = {
  publishers: publishers.map((slug) => ({ slug, name: `Pub ${slug}`, verified: slug === "shared" })),
  packages: [
    ["solo-one", "solo", "hidden"],
    ["solo-two", "solo", "unreviewed"],
    ["@shared/tool", "shared", "listed"],
    ["joint-app", "joint", "rejected"],
    ["stranded-kit", "stranded", "featured"],
    ["other-thing", "other", "listed"]
  ].map(([name, publisher, curationStatus], i) => ({
    name: name!,
    displayName: `Display ${name}`,
    publisher: publisher!,
    curationStatus: curationStatus as "listed",
    updatedAt: at(i),
    versions: i === 1 ? [] : [version("1.0.0", i), version("1.2.0", i + 1)]
  }))
}

const memberships: ReadonlyArray<readonly [string, string, PublisherRole]> = [
  ["alice@example.com", "solo", "owner"],
  ["alice@example.com", "shared", "owner"],
  ["bob@example.com", "shared", "owner"],
  ["alice@example.com", "joint", "member"],
  ["eve@example.com", "joint", "owner"],
  ["carol@example.com", "stranded", "owner"],
  ["dave@example.com", "stranded", "member"],
  ["bob@example.com", "other", "owner"],
  ["gina@example.com", "ginas", "owner"]
]

/** Tables whose rows belong to somebody, with the column naming the user. */
const owned: ReadonlyArray<readonly [string, string]> = [
  ["users", "id"],
  ["api_tokens", "user_id"],
  ["sessions", "user_id"],
  ["oauth_grants", "user_id"],
  ["device_links", "user_id"],
  ["media", "owner_id"],
  ["publisher_members", "user_id"]
]

describe.each(dialects)("account routes on %s", (dialect) => {
  let server: RunningMarketplace
  const alice = account("alice@example.com", "user", { read: ["packages:read"], write: ["account:write"] })
  const bob = account("bob@example.com", "user", { read: ["packages:read"] })
  const carol = account("carol@example.com", "user")
  const dave = account("dave@example.com", "user")
  const eve = account("eve@example.com", "user")
  const frank = account("frank@example.com", "user")
  const gina = account("gina@example.com", "user", { one: ["packages:read"], two: ["packages:read"] })

  /** Device links and media of each user: the API has no routes for them yet. */
  const belongings = (who: Account, devices: number, media: number) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        ...Array.from({ length: devices }, (_, i) =>
          sql`INSERT INTO device_links (id, user_id, label, created_at)
            VALUES (${`dev_${who.id}_${i}`}, ${who.id}, ${"phone"}, ${at(0)})`),
        ...Array.from({ length: media }, (_, i) =>
          sql`INSERT INTO media (id, owner_id, content_type, byte_size, created_at)
            VALUES (${`med_${who.id}_${i}`}, ${who.id}, ${"image/png"}, ${10}, ${at(0)})`)
      ]))

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, {
      setup: Effect.gen(function*() {
        yield* Effect.all([alice.setup, bob.setup, carol.setup, dave.setup, eve.setup, frank.setup, gina.setup])
        const credentials = yield* Credentials
        yield* credentials.issueOAuthToken({
          email: "alice@example.com",
          scopes: ["packages:read"],
          audience: `${testOrigin}/api/v1`,
          clientId: "app",
          expiresAt: new Date(Date.now() + 3_600_000)
        })
        yield* credentials.issueOAuthToken({
          email: "bob@example.com",
          scopes: ["packages:read"],
          audience: `${testOrigin}/api/v1`,
          clientId: "app",
          expiresAt: new Date(Date.now() + 3_600_000)
        })
      })
    })
    await server.query(
      Effect.gen(function*() {
        const accounts = yield* AccountStore
        for (const [email, publisherSlug, role] of memberships) {
          yield* accounts.setPublisherMember({ email, publisherSlug, role })
        }
        yield* belongings(alice.account, 2, 3)
        yield* belongings(bob.account, 1, 1)
        yield* belongings(gina.account, 1, 2)
      }).pipe(Effect.provide(SqlAccounts.layer), Effect.orDie)
    )
  })
  afterAll(() => server.close())

  const myPackages = (headers: Record<string, string>) =>
    call(server, { method: "GET", path: "/api/v1/me/packages", headers })
  const deleteMe = (headers: Record<string, string>, body: unknown = { confirm: "DELETE" }) =>
    call(server, { method: "DELETE", path: "/api/v1/me", headers, body })
  const snapshot = () =>
    server.query(Effect.all(Object.fromEntries(
      [...owned.map(([table]) => table), "publishers", "packages", "oauth_access_tokens"].map((table) => [
        table,
        rows(table)
      ])
    )))
  const byId = (list: ReadonlyArray<Record<string, unknown>>) =>
    [...list].sort((a, b) => JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)

  it("lists the listings of every publisher the caller belongs to, in any curation state", async () => {
    const response = await myPackages(bearer(alice.account.session))
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      items: [
        ["@shared/tool", "shared", "listed", "1.2.0", true],
        ["joint-app", "joint", "rejected", "1.2.0", false],
        ["solo-one", "solo", "hidden", "1.2.0", false],
        ["solo-two", "solo", "unreviewed", null, false]
      ].map(([name, slug, curationStatus, latestVersion, verifiedPublisher]) => ({
        id: expect.stringMatching(/\S/),
        name,
        displayName: `Display ${name}`,
        latestVersion,
        curationStatus,
        verifiedPublisher,
        publisher: { id: expect.stringMatching(/\S/), slug, name: `Pub ${slug}` }
      }))
    })
    const withToken = await myPackages(bearer(bob.account.tokens.read!))
    expect(withToken.body.items.map((item: { name: string }) => item.name)).toEqual(["@shared/tool", "other-thing"])
    expect((await myPackages(bearer(frank.account.session))).body).toEqual({ items: [] })
  })

  it("needs packages:read for the listings", async () => {
    const response = await myPackages(bearer(alice.account.tokens.write!))
    expect(response.status).toBe(403)
    expect(response.body.error.code).toBe("forbidden")
  })

  it("refuses a deletion without the exact confirmation, by an API token, or from another site, changing nothing", async () => {
    const before = await snapshot()
    for (const body of [{ confirm: "delete" }, {}, { confirm: true }]) {
      expectValidationFailed(await deleteMe(bearer(alice.account.session), body), "confirm")
    }
    for (const token of [alice.account.tokens.write!, alice.account.tokens.read!]) {
      const response = await deleteMe(bearer(token))
      expect(response.status).toBe(403)
      expect(response.body.error).toMatchObject({ code: "forbidden", message: "Deleting the account needs a signed-in session" })
    }
    for (const headers of [{}, { origin: "https://evil.test" }, { ...fromSite, "sec-fetch-site": "cross-site" }]) {
      const response = await deleteMe({ ...cookie(alice.account.session), ...headers })
      expect(response.status).toBe(403)
      expect(response.body.error.code).toBe("forbidden")
    }
    expect(await snapshot()).toEqual(before)
  })

  it("answers 409 conflict for the last owner of a publisher that has other members, changing nothing", async () => {
    const before = await snapshot()
    const response = await deleteMe(bearer(carol.account.session))
    expect(response.status).toBe(409)
    expect(response.body.error).toMatchObject({ code: "conflict", details: { publishers: ["stranded"] } })
    expect(await snapshot()).toEqual(before)
  })

  it("removes the account and everything tied to it, and nothing else", async () => {
    const before = await snapshot()
    const response = await deleteMe({ ...cookie(alice.account.session), ...fromSite, "idempotency-key": "bye" })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      deleted: true,
      removed: { apiTokens: 2, deviceLinks: 2, oauthGrants: 1, publishers: 1, media: 3 }
    })

    const after = await snapshot()
    for (const [table, column] of owned) {
      expect(byId(after[table]!), table).toEqual(byId(before[table]!.filter((row) => row[column === "id" ? "id" : camel(column)] !== alice.account.id)))
    }
    const soloId = before.publishers!.find((row) => row.slug === "solo")!.id
    expect(byId(after.publishers!)).toEqual(byId(before.publishers!.filter((row) => row.slug !== "solo")))
    expect(byId(after.packages!)).toEqual(
      byId(before.packages!.map((row) => row.publisherId === soloId ? { ...row, publisherId: null } : row))
    )
    const aliceGrants = new Set(before.oauth_grants!.filter((row) => row.userId === alice.account.id).map((row) => row.id))
    expect(byId(after.oauth_access_tokens!)).toEqual(
      byId(before.oauth_access_tokens!.filter((row) => !aliceGrants.has(row.grantId)))
    )

    expect((await call(server, { method: "GET", path: "/api/v1/me", headers: bearer(alice.account.session) })).status)
      .toBe(401)
    expect((await myPackages(bearer(bob.account.session))).body.items.map((item: { name: string }) => item.name))
      .toEqual(["@shared/tool", "other-thing"])
  })

  it("deletes once when 10 requests without a key arrive together: one answer with the counts, the others 401", async () => {
    const extra = await server.query(
      Effect.flatMap(Credentials, (credentials) =>
        Effect.all(Array.from({ length: 4 }, () => credentials.issueSession("gina@example.com")))).pipe(
        Effect.provide((await import("../../../layers/marketplace/sql/SqlCredentials.js")).layer)
      )
    )
    const sessions = [gina.account.session, ...extra.map(Redacted.value)]
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => deleteMe(bearer(sessions[i % sessions.length]!)))
    )
    const ok = responses.filter((response) => response.status === 200)
    expect(ok).toHaveLength(1)
    expect(ok[0]!.body).toEqual({
      deleted: true,
      removed: { apiTokens: 2, deviceLinks: 1, oauthGrants: 0, publishers: 1, media: 2 }
    })
    for (const response of responses.filter((response) => response.status !== 200)) {
      expect([response.status, response.body.error.code]).toEqual([401, "unauthorized"])
    }
    const [users, publisherRows] = await server.query(Effect.all([rows("users"), rows("publishers")]))
    expect(users.some((row) => row.email === "gina@example.com")).toBe(false)
    expect(publisherRows.some((row) => row.slug === "ginas")).toBe(false)
  })

  it("deletes once when 20 identical requests with one key arrive together", async () => {
    const extra = await server.query(
      Effect.flatMap(Credentials, (credentials) =>
        Effect.all(Array.from({ length: 3 }, () => credentials.issueSession("frank@example.com")))).pipe(
        Effect.provide((await import("../../../layers/marketplace/sql/SqlCredentials.js")).layer)
      )
    )
    const sessions = [frank.account.session, ...extra.map(Redacted.value)]
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => deleteMe({ ...bearer(sessions[i % sessions.length]!), "idempotency-key": "once" }))
    )
    const ok = responses.filter((response) => response.status === 200)
    expect(ok.length).toBeGreaterThan(0)
    for (const response of ok) {
      expect(response.body).toEqual({
        deleted: true,
        removed: { apiTokens: 0, deviceLinks: 0, oauthGrants: 0, publishers: 0, media: 0 }
      })
    }
    for (const response of responses.filter((response) => response.status !== 200)) {
      expect([[409, "idempotency_in_progress"], [401, "unauthorized"]]).toContainEqual([
        response.status,
        response.body.error.code
      ])
    }
    const users = await server.query(rows("users"))
    expect(users.some((row) => row.email === "frank@example.com")).toBe(false)
  })
})

const camel = (column: string) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
