import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option, Redacted, TestClock } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCredentials from "../../../layers/marketplace/sql/SqlCredentials.js"
import type { Scope } from "../../../schema/marketplace/Account.js"
import { Credentials, roleScopes } from "../../../services/marketplace/Credentials.js"
import * as TokenFormat from "../../../services/marketplace/TokenFormat.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace } from "../../support/MarketplaceServer.js"

interface Issued {
  oauthElsewhere: string
  apiToken: string
  expired: string
  revoked: string
  session: string
  adminSession: string
  tokenRows: ReadonlyArray<Record<string, unknown>>
  sessionRows: ReadonlyArray<Record<string, unknown>>
}

const tokenScopes: ReadonlyArray<Scope> = ["packages:read", "account:read"]

const me = (server: RunningMarketplace, headers: Record<string, string> = {}) =>
  server.request("/api/v1/me", { headers })

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Changes the last checksum character, keeping the token well-formed otherwise. */
const breakChecksum = (token: string) => token.slice(0, -1) + (token.endsWith("A") ? "B" : "A")

describe.each(dialects)("GET /me on %s", (dialect) => {
  let server: RunningMarketplace
  const issued = {} as Issued

  beforeAll(async () => {
    server = await startMarketplace(dialect, {}, {
      setup: Effect.gen(function*() {
        const credentials = yield* Credentials
        const sql = yield* SqlClient.SqlClient
        yield* credentials.createUser({ email: "Alice@Example.com", name: "Alice", emailVerified: true })
        yield* credentials.createUser({ email: "root@example.com", name: "Root", role: "admin" })
        const email = "alice@example.com"
        issued.apiToken = Redacted.value(yield* credentials.issueApiToken({ email, scopes: tokenScopes }))
        issued.expired = Redacted.value(
          yield* credentials.issueApiToken({ email, scopes: tokenScopes, expiresAt: new Date(Date.now() - 60_000) })
        )
        const revoked = yield* credentials.issueApiToken({ email, scopes: tokenScopes })
        expect(yield* credentials.revokeApiToken(revoked)).toBe(true)
        expect(yield* credentials.revokeApiToken(revoked)).toBe(false)
        issued.revoked = Redacted.value(revoked)
        issued.session = Redacted.value(yield* credentials.issueSession(email))
        issued.adminSession = Redacted.value(yield* credentials.issueSession("root@example.com"))
        issued.oauthElsewhere = Redacted.value(
          yield* credentials.issueOAuthToken({
            email,
            scopes: ["packages:read"],
            audience: "https://elsewhere.test/api/v1",
            clientId: "app",
            expiresAt: new Date(Date.now() + 3_600_000)
          })
        )
        issued.tokenRows = yield* sql<Record<string, unknown>>`SELECT * FROM api_tokens`
        issued.sessionRows = yield* sql<Record<string, unknown>>`SELECT * FROM sessions`
      })
    })
  })
  afterAll(() => server.close())

  const expectUnauthorized = async (headers: Record<string, string>, message: string) => {
    const response = await me(server, headers)
    expect(response.status).toBe(401)
    expect(response.body.error.code).toBe("unauthorized")
    expect(response.body.error.message).toBe(message)
    for (const token of Object.values(headers)) {
      const secret = token.replace(/^Bearer /, "").replace(/^app\.session_token=/, "")
      expect(response.text).not.toContain(secret)
    }
  }

  it("issues tokens in the documented formats", () => {
    expect(issued.apiToken).toMatch(/^cmk_[0-9A-Za-z]{38}$/)
    expect(issued.session).toMatch(/^cms_[0-9A-Za-z]{38}$/)
    expect(TokenFormat.parse(issued.apiToken)).toBe("api-token")
    expect(TokenFormat.parse(issued.session)).toBe("session")
    expect(TokenFormat.parse(breakChecksum(issued.apiToken))).toBeUndefined()
  })

  it("answers 401 without a credential", () => expectUnauthorized({}, "A credential is required"))

  it.each([
    ["a malformed token", () => "cmk_not-a-real-token"],
    ["a token with a bad checksum", () => breakChecksum(issued.apiToken)],
    ["an unknown well-formed token", () => TokenFormat.generate("api-token")],
    ["an unknown well-formed session token", () => TokenFormat.generate("session")],
    ["an expired token", () => issued.expired],
    ["a revoked token", () => issued.revoked]
  ])("answers 401 for %s", (_, token) => expectUnauthorized(bearer(token()), "The credential is not valid"))

  it("answers 401 for an OAuth token of another audience, saying which audience this API accepts", () =>
    expectUnauthorized(
      bearer(issued.oauthElsewhere),
      "The OAuth access token is for https://elsewhere.test/api/v1, not for this API (https://market.test/api/v1)"
    ))

  it("answers 401 for an unknown session cookie and for an API token in the cookie", async () => {
    await expectUnauthorized({ cookie: `app.session_token=${TokenFormat.generate("session")}` }, "The credential is not valid")
    await expectUnauthorized({ cookie: `app.session_token=${issued.apiToken}` }, "The credential is not valid")
  })

  it("does not let a valid cookie rescue a refused bearer", () =>
    expectUnauthorized(
      { ...bearer(issued.revoked), cookie: `app.session_token=${issued.session}` },
      "The credential is not valid"
    ))

  it("answers the profile with exactly the API token's scopes", async () => {
    const response = await me(server, bearer(issued.apiToken))
    expect(response.status).toBe(200)
    expect(response.body).toEqual({
      id: expect.stringMatching(/\S/),
      name: "Alice",
      email: "alice@example.com",
      emailVerified: true,
      image: null,
      role: "user",
      scopes: tokenScopes,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
    })
  })

  it("answers the user's role scopes for a session token as bearer", async () => {
    const response = await me(server, bearer(issued.session))
    expect(response.status).toBe(200)
    expect(response.body.email).toBe("alice@example.com")
    expect(response.body.scopes).toEqual(roleScopes.user)
  })

  it("answers the user's role scopes for the session cookie", async () => {
    const response = await me(server, { cookie: `app.session_token=${issued.session}` })
    expect(response.status).toBe(200)
    expect(response.body.email).toBe("alice@example.com")
    expect(response.body.scopes).toEqual(roleScopes.user)
  })

  it("gives an admin session every scope", async () => {
    const response = await me(server, bearer(issued.adminSession))
    expect(response.status).toBe(200)
    expect(response.body.role).toBe("admin")
    expect(response.body.scopes).toContain("packages:curate")
    expect(response.body.scopes).toContain("admin")
    expect(response.body.scopes).toHaveLength(13)
  })

  it("stores tokens only as their SHA-256 hashes", () => {
    const plain = [issued.apiToken, issued.expired, issued.revoked, issued.session, issued.adminSession]
    const stored = JSON.stringify([issued.tokenRows, issued.sessionRows])
    for (const token of plain) {
      expect(stored).not.toContain(token)
      expect(stored).not.toContain(token.slice(4, 36))
    }
    expect(issued.tokenRows.map((row) => row.tokenHash).sort()).toEqual(
      [issued.apiToken, issued.expired, issued.revoked].map(TokenFormat.hash).sort()
    )
    expect(issued.sessionRows.map((row) => row.tokenHash).sort()).toEqual(
      [issued.session, issued.adminSession].map(TokenFormat.hash).sort()
    )
    for (const row of [...issued.tokenRows, ...issued.sessionRows]) expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/)
  })

  it.effect("judges OAuth token expiry by the Clock and reports the token's audience and grant scopes", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const token = yield* credentials.issueOAuthToken({
        email: "alice@example.com",
        scopes: ["packages:read"],
        audience: "https://market.test/api/v1",
        clientId: "app",
        expiresAt: new Date((yield* Clock.currentTimeMillis) + 60 * 60 * 1000)
      })
      expect(Redacted.value(token)).toMatch(/^cmo_[0-9A-Za-z]{38}$/)
      const found = yield* credentials.authenticate(token, "bearer")
      expect(Option.getOrThrow(found)).toMatchObject({
        kind: "oauth",
        audience: "https://market.test/api/v1",
        scopes: ["packages:read"]
      })
      expect(Option.isNone(yield* credentials.authenticate(token, "cookie"))).toBe(true)
      yield* TestClock.adjust("59 minutes")
      expect(Option.isSome(yield* credentials.authenticate(token, "bearer"))).toBe(true)
      yield* TestClock.adjust("2 minutes")
      expect(Option.isNone(yield* credentials.authenticate(token, "bearer"))).toBe(true)
    }).pipe(
      Effect.provide(SqlCredentials.layer),
      Effect.provide(Database.layer(server.database.parsed))
    ))

  it.effect("judges session expiry by the Clock", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const token = yield* credentials.issueSession("alice@example.com", { ttlMillis: 60 * 60 * 1000 })
      expect(Option.isSome(yield* credentials.authenticate(token, "cookie"))).toBe(true)
      yield* TestClock.adjust("59 minutes")
      expect(Option.isSome(yield* credentials.authenticate(token, "bearer"))).toBe(true)
      yield* TestClock.adjust("2 minutes")
      expect(Option.isNone(yield* credentials.authenticate(token, "bearer"))).toBe(true)
    }).pipe(
      Effect.provide(SqlCredentials.layer),
      Effect.provide(Database.layer(server.database.parsed))
    ))
})
