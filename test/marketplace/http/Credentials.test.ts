/**
 * Credential management and the admin routes on both databases, through the
 * typed client against the real server: personal API tokens (created and
 * shown once, stored as a hash, revoked), linked devices and OAuth grants
 * (listed and revoked), the counts of DELETE /me afterwards, suspending an
 * account, and the audit log (curator and admin actions, admin only, paged).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { Conflict, Forbidden, NotFound } from "../../../schema/marketplace/Errors.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import * as TokenFormat from "../../../services/marketplace/TokenFormat.js"
import { dialects } from "../../support/Databases.js"
import { type RunningMarketplace, startMarketplace, testOrigin } from "../../support/MarketplaceServer.js"
import { account, bearer, call, rows } from "../fixtures/Accounts.js"
import { at, type Document, version } from "../fixtures/Listing.js"
import { typedAs, typedFailureAs } from "../fixtures/Typed.js"

const document: Document = {
  publishers: [{ slug: "acme", name: "Acme", verified: true }],
  packages: [{
    name: "audited-pkg",
    displayName: "Audited",
    publisher: "acme",
    curationStatus: "listed",
    updatedAt: at(0),
    versions: [version("1.0.0", 0)]
  }]
}

const manage = ["account:read", "account:write", "packages:read"] as const

describe.each(dialects)("credential management on %s", (dialect) => {
  let server: RunningMarketplace
  const alice = account("alice-creds@example.com", "user", { manager: manage, reader: ["account:read"] })
  const bob = account("bob-creds@example.com", "user", { reader: ["account:read", "packages:read"] })
  const root = account("root-creds@example.com", "admin", { admin: ["admin"], curate: ["packages:curate"] })
  const issued = { grantTokens: [] as Array<string>, deviceIds: [] as Array<string> }

  beforeAll(async () => {
    server = await startMarketplace(dialect, document, {
      setup: Effect.gen(function*() {
        yield* alice.setup
        yield* bob.setup
        yield* root.setup
        const credentials = yield* Credentials
        for (const clientId of ["app-one", "app-two"]) {
          issued.grantTokens.push(Redacted.value(
            yield* credentials.issueOAuthToken({
              email: alice.account.email,
              scopes: ["account:read"],
              audience: `${testOrigin}/api/v1`,
              clientId,
              expiresAt: new Date(Date.now() + 3_600_000)
            })
          ))
        }
        // No linking flow exists yet: links are rows as it would write them.
        const sql = yield* SqlClient.SqlClient
        for (const label of ["phone", "laptop"]) {
          const id = `dev_${randomUUID()}`
          issued.deviceIds.push(id)
          yield* sql`INSERT INTO device_links (id, user_id, label, created_at)
            VALUES (${id}, ${alice.account.id}, ${label}, ${new Date().toISOString()})`
        }
      })
    })
  })
  afterAll(() => server.close())

  const manager = () => alice.account.tokens.manager!
  const me = (token: string) => server.request("/api/v1/me", { headers: bearer(token) })
  const tokenRows = () => server.query(rows("api_tokens", `user_id = '${alice.account.id}'`))

  describe("personal API tokens", () => {
    let created: { readonly id: string; readonly secret: string }

    it("creates one: 201 with the plain value once, stored only as its hash, working at once", async () => {
      const before = (await tokenRows()).length
      const [result, response] = await typedAs(server, manager(), (client) =>
        client.credentials.createToken({
          payload: { name: "ci", scopes: ["packages:read"], expiresInDays: 30 },
          withResponse: true
        }))
      expect(response.status).toBe(201)
      expect(TokenFormat.parse(result.secret)).toBe("api-token")
      expect(result.token).toMatchObject({ name: "ci", scopes: ["packages:read"], revokedAt: null })
      expect(Date.parse(result.token.expiresAt!) - Date.parse(result.token.createdAt)).toBe(30 * 24 * 3_600_000)
      created = { id: result.token.id, secret: result.secret }

      const stored = (await tokenRows()).find((row) => row.id === created.id)!
      expect(stored.token_hash ?? stored.tokenHash).toBe(TokenFormat.hash(created.secret))
      expect(JSON.stringify(await tokenRows())).not.toContain(created.secret)
      expect((await tokenRows()).length).toBe(before + 1)

      const profile = await me(created.secret)
      expect(profile.status).toBe(200)
      expect(profile.body.scopes).toEqual(["packages:read"])
    })

    it("lists the account's tokens without any plain value", async () => {
      const listed = await call(server, { method: "GET", path: "/api/v1/me/tokens", headers: bearer(alice.account.tokens.reader!) })
      expect(listed.status).toBe(200)
      expect(listed.body.items.map((item: { name: string }) => item.name)).toContain("ci")
      expect(listed.text).not.toContain(created.secret)
      expect(listed.text).not.toContain(manager())
      expect(listed.text).not.toMatch(/cmk_/)
      // Only the caller's own.
      const bobs = await typedAs(server, bob.account.tokens.reader!, (client) => client.credentials.tokens())
      expect(bobs.items.map((item) => item.id)).not.toContain(created.id)
    })

    it("refuses scopes the asking credential does not hold: 403, nothing stored", async () => {
      const before = (await tokenRows()).length
      const refused = await typedFailureAs(server, manager(), (client) =>
        client.credentials.createToken({ payload: { name: "more", scopes: ["pages:read"] } }))
      expect(refused).toBeInstanceOf(Forbidden)
      expect((await tokenRows()).length).toBe(before)
    })

    it("needs account:write to create: 403 with account:read only", async () => {
      const refused = await typedFailureAs(server, alice.account.tokens.reader!, (client) =>
        client.credentials.createToken({ payload: { name: "x", scopes: ["account:read"] } }))
      expect(refused).toBeInstanceOf(Forbidden)
    })

    it.each([
      ["no scopes", { name: "x", scopes: [] }, "scopes"],
      ["an unknown scope", { name: "x", scopes: ["root"] }, "scopes.0"],
      ["an empty name", { name: "", scopes: ["account:read"] }, "name"],
      ["a 101-character name", { name: "n".repeat(101), scopes: ["account:read"] }, "name"],
      ["a lifetime of 0 days", { name: "x", scopes: ["account:read"], expiresInDays: 0 }, "expiresInDays"]
    ])("refuses %s: 400 validation_failed, nothing stored", async (_, body, path) => {
      const before = (await tokenRows()).length
      const refused = await call(server, { method: "POST", path: "/api/v1/me/tokens", headers: bearer(manager()), body })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("validation_failed")
      expect(refused.body.error.details.issues[0].path).toBe(path)
      expect((await tokenRows()).length).toBe(before)
    })

    it("revokes one: it stops working at once, is listed as revoked, and revoking again changes nothing", async () => {
      const revoked = await typedAs(server, manager(), (client) => client.credentials.revokeToken({ path: { id: created.id } }))
      expect(revoked.id).toBe(created.id)
      expect(revoked.revokedAt).not.toBeNull()
      const refused = await me(created.secret)
      expect(refused.status).toBe(401)
      expect(refused.text).not.toContain(created.secret)
      const again = await typedAs(server, manager(), (client) => client.credentials.revokeToken({ path: { id: created.id } }))
      expect(again.revokedAt).toBe(revoked.revokedAt)
      const listed = await typedAs(server, manager(), (client) => client.credentials.tokens())
      expect(listed.items.find((item) => item.id === created.id)?.revokedAt).toBe(revoked.revokedAt)
    })

    it("answers 404 for another account's token and an unknown one, revoking nothing", async () => {
      const [bobsToken] = await server.query(rows("api_tokens", `user_id = '${bob.account.id}'`))
      for (const id of [String(bobsToken!.id), "tok_unknown"]) {
        const refused = await typedFailureAs(server, manager(), (client) => client.credentials.revokeToken({ path: { id } }))
        expect(refused).toBeInstanceOf(NotFound)
      }
      expect((await me(bob.account.tokens.reader!)).status).toBe(200)
    })
  })

  describe("linked devices and OAuth grants", () => {
    it("lists and revokes a device link; a second revoke is 404", async () => {
      const listed = await typedAs(server, manager(), (client) => client.credentials.devices())
      expect(listed.items.map((item) => item.label).sort()).toEqual(["laptop", "phone"])
      const id = issued.deviceIds[0]!
      expect(await typedAs(server, manager(), (client) => client.credentials.revokeDevice({ path: { id } })))
        .toEqual({ id, revoked: true })
      expect((await typedAs(server, manager(), (client) => client.credentials.devices())).items.map((item) => item.id))
        .toEqual([issued.deviceIds[1]])
      const again = await typedFailureAs(server, manager(), (client) => client.credentials.revokeDevice({ path: { id } }))
      expect(again).toBeInstanceOf(NotFound)
      // Another account cannot revoke it.
      const foreign = await typedFailureAs(server, bob.account.session, (client) =>
        client.credentials.revokeDevice({ path: { id: issued.deviceIds[1]! } }))
      expect(foreign).toBeInstanceOf(NotFound)
    })

    it("lists and revokes an OAuth grant: its access token stops working", async () => {
      const listed = await typedAs(server, manager(), (client) => client.credentials.grants())
      expect(listed.items.map((item) => item.clientId).sort()).toEqual(["app-one", "app-two"])
      expect(listed.items[0]!.scopes).toEqual(["account:read"])
      expect((await me(issued.grantTokens[0]!)).status).toBe(200)
      const one = listed.items.find((item) => item.clientId === "app-one")!
      expect(await typedAs(server, manager(), (client) => client.credentials.revokeGrant({ path: { id: one.id } })))
        .toEqual({ id: one.id, revoked: true })
      expect((await me(issued.grantTokens[0]!)).status).toBe(401)
      expect((await me(issued.grantTokens[1]!)).status).toBe(200)
      expect((await typedAs(server, manager(), (client) => client.credentials.grants())).items).toHaveLength(1)
    })

    it("refuses a malformed id: 400 validation_failed naming id", async () => {
      const refused = await call(server, { method: "DELETE", path: "/api/v1/me/grants/a%20b", headers: bearer(manager()) })
      expect(refused.status).toBe(400)
      expect(refused.body.error.details.issues[0].path).toBe("id")
    })
  })

  describe("suspension and the audit log (admin)", () => {
    const adminToken = () => root.account.tokens.admin!

    it("suspends an account: every credential of it answers 403, until the suspension is lifted", async () => {
      const suspended = await typedAs(server, adminToken(), (client) =>
        client.admin.suspend({ path: { id: bob.account.id }, payload: { suspended: true, reason: "abuse report" } }))
      expect(suspended.id).toBe(bob.account.id)
      expect(suspended.suspendedAt).not.toBeNull()
      for (const token of [bob.account.session, bob.account.tokens.reader!]) {
        const refused = await me(token)
        expect(refused.status).toBe(403)
        expect(refused.body.error).toMatchObject({ code: "forbidden", message: "The account is suspended" })
      }
      // Suspending again keeps the first instant.
      const again = await typedAs(server, adminToken(), (client) =>
        client.admin.suspend({ path: { id: bob.account.id }, payload: { suspended: true } }))
      expect(again.suspendedAt).toBe(suspended.suspendedAt)

      const lifted = await typedAs(server, adminToken(), (client) =>
        client.admin.suspend({ path: { id: bob.account.id }, payload: { suspended: false } }))
      expect(lifted.suspendedAt).toBeNull()
      expect((await me(bob.account.session)).status).toBe(200)

      const log = await typedAs(server, adminToken(), (client) => client.admin.audit({ urlParams: { target: bob.account.id } }))
      expect(log.items.map((entry) => entry.action)).toEqual(["account.unsuspend", "account.suspend"])
      expect(log.items[1]).toMatchObject({
        actorId: root.account.id,
        targetKind: "account",
        before: { suspendedAt: null },
        after: { suspendedAt: suspended.suspendedAt, reason: "abuse report" }
      })
    })

    it("refuses a non-admin (403), an unknown account (404) and suspending oneself (409)", async () => {
      const user = await typedFailureAs(server, manager(), (client) =>
        client.admin.suspend({ path: { id: bob.account.id }, payload: { suspended: true } }))
      expect(user).toBeInstanceOf(Forbidden)
      expect((await me(bob.account.session)).status).toBe(200)
      const unknown = await typedFailureAs(server, adminToken(), (client) =>
        client.admin.suspend({ path: { id: "usr_nobody" }, payload: { suspended: true } }))
      expect(unknown).toBeInstanceOf(NotFound)
      const self = await typedFailureAs(server, adminToken(), (client) =>
        client.admin.suspend({ path: { id: root.account.id }, payload: { suspended: true } }))
      expect(self).toBeInstanceOf(Conflict)
      expect((await me(adminToken())).status).toBe(200)
    })

    it("records curator decisions in the audit log beside the curation log, in the same transaction", async () => {
      const changed = await call(server, {
        method: "POST",
        path: "/api/v1/curation/packages/audited-pkg/status",
        headers: bearer(root.account.tokens.curate!),
        body: { status: "hidden", reason: "broken" }
      })
      expect(changed.status).toBe(200)
      const log = await typedAs(server, adminToken(), (client) =>
        client.admin.audit({ urlParams: { target: "audited-pkg" } }))
      expect(log.items).toEqual([{
        id: expect.any(String),
        at: expect.any(String),
        actorId: root.account.id,
        action: "curation.status",
        targetKind: "package",
        target: "audited-pkg",
        before: { curationStatus: "listed" },
        after: { curationStatus: "hidden", reason: "broken" }
      }])
    })

    it("is read by admins only, newest first, a page at a time", async () => {
      const refused = await typedFailureAs(server, manager(), (client) => client.admin.audit({ urlParams: {} }))
      expect(refused).toBeInstanceOf(Forbidden)
      const all = await typedAs(server, adminToken(), (client) => client.admin.audit({ urlParams: {} }))
      expect(all.items.length).toBeGreaterThanOrEqual(3)
      const ids = all.items.map((entry) => Number(entry.id))
      expect(ids).toEqual([...ids].sort((a, b) => b - a))
      const first = await typedAs(server, adminToken(), (client) => client.admin.audit({ urlParams: { limit: 2 } }))
      expect(first.items.map((entry) => entry.id)).toEqual(all.items.slice(0, 2).map((entry) => entry.id))
      const second = await typedAs(server, adminToken(), (client) =>
        client.admin.audit({ urlParams: { limit: 2, cursor: first.nextCursor! } }))
      expect(second.items.map((entry) => entry.id)).toEqual(all.items.slice(2, 4).map((entry) => entry.id))
      const byAction = await typedAs(server, adminToken(), (client) =>
        client.admin.audit({ urlParams: { action: "account.suspend" } }))
      expect(byAction.items.every((entry) => entry.action === "account.suspend")).toBe(true)
    })

    it("refuses to change or remove an entry: the table is append-only", async () => {
      const attempt = (statement: string) =>
        server.query(Effect.flip(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement))))
      await expect(attempt("UPDATE audit_log SET action = 'forged'")).resolves.toBeDefined()
      await expect(attempt("DELETE FROM audit_log")).resolves.toBeDefined()
      expect((await server.query(rows("audit_log", "action = 'forged'"))).length).toBe(0)
      expect((await server.query(rows("audit_log"))).length).toBeGreaterThan(0)
    })
  })

  it("DELETE /me counts what the account still had: revoked tokens are rows it removes, revoked devices and grants are gone", async () => {
    const tokens = (await tokenRows()).length
    const deleted = await call(server, {
      method: "DELETE",
      path: "/api/v1/me",
      headers: bearer(alice.account.session),
      body: { confirm: "DELETE" }
    })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({
      deleted: true,
      removed: { apiTokens: tokens, deviceLinks: 1, oauthGrants: 1, publishers: 0, media: 0 }
    })
    // manager, reader, and "ci" (revoked).
    expect(tokens).toBe(3)
  })
})
