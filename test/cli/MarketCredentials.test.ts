/**
 * The real `clark market devices …`, `grants …`, `admin suspend|unsuspend` and `audit`, end to end (see
 * MarketFixture.ts): links and grants listed and revoked (the rows gone, a revoked grant's access token
 * refused), an account suspended and lifted by an admin (its token refused meanwhile), and the audit log
 * read as a table, as JSON and a page at a time; each refused without its scope, storing nothing.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import type { Scope } from "../../schema/marketplace/Account.js"
import * as SqlCredentials from "../../layers/marketplace/sql/SqlCredentials.js"
import { Credentials } from "../../services/marketplace/Credentials.js"
import { testOrigin } from "../support/MarketplaceServer.js"
import { bearer, clark, expectFailure, expectNoSecrets, outputs, server, slow, useMarketplace } from "./MarketFixture.js"

useMarketplace()

/** Every token made here, to prove at the end that no output showed one. */
const made: Array<string> = []

interface Person {
  readonly id: string
  readonly email: string
  readonly token: string
}

/** A new account with an API token of `scopes`. */
const person = (role: "admin" | "user", scopes: ReadonlyArray<Scope>) =>
  server.query(Effect.gen(function*() {
    const credentials = yield* Credentials
    const email = `${role}-${randomUUID().slice(0, 8)}@example.com`
    const profile = yield* credentials.createUser({ email, name: email.split("@")[0]!, role })
    const token = Redacted.value(yield* credentials.issueApiToken({ email, scopes }))
    made.push(token)
    return { id: profile.id, email, token } satisfies Person
  }).pipe(Effect.provide(SqlCredentials.layer), Effect.orDie))

/** No linking flow exists yet: a link is the row it would write. */
const link = (owner: Person, label: string) =>
  server.query(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = `dev_${randomUUID()}`
    yield* sql`INSERT INTO device_links (id, user_id, label, created_at) VALUES (${id}, ${owner.id}, ${label}, ${new Date().toISOString()})`
    return id
  }))

/** An OAuth access token for `clientId`, which makes the grant as the authorisation flow does. */
const grant = (owner: Person, clientId: string) =>
  server.query(Effect.gen(function*() {
    const credentials = yield* Credentials
    const token = Redacted.value(yield* credentials.issueOAuthToken({
      email: owner.email,
      scopes: ["account:read"],
      audience: `${testOrigin}/api/v1`,
      clientId,
      expiresAt: new Date(Date.now() + 3_600_000)
    }))
    made.push(token)
    return token
  }).pipe(Effect.provide(SqlCredentials.layer), Effect.orDie))

const count = (table: "device_links" | "oauth_grants", owner: Person) =>
  server.query(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly n: number | string }>`SELECT COUNT(*) AS n FROM ${sql(table)} WHERE user_id = ${owner.id}`
    return Number(rows[0]!.n)
  }))

const me = (token: string) => server.request("/api/v1/me", bearer(token))

describe("clark market devices", () => {
  it("lists the linked devices, revokes one (its row gone), and refuses another account's id as not_found", async () => {
    const owner = await person("user", ["account:read", "account:write"])
    const stranger = await person("user", ["account:read", "account:write"])
    const phone = await link(owner, "phone")
    await link(owner, "laptop\u001b[31m")
    const as = (args: ReadonlyArray<string>, who = owner) => clark([...args, "--token", who.token])

    const listed = await as(["devices", "list"])
    expect(listed).toMatchObject({ code: 0, stderr: "" })
    const lines = listed.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^ID\s+LABEL\s+LINKED$/)
    const rows = lines.slice(1).map((line) => line.split(/\s+/))
    expect(rows.map((row) => row[1]).sort()).toEqual(["laptop", "phone"])
    expect(rows.find((row) => row[1] === "phone")?.[0]).toBe(phone)
    // A label's control characters never reach the terminal.
    expect(listed.stdout).not.toContain("\u001b")
    const json = await as(["devices", "list", "--json"])
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/me/devices", bearer(owner.token))).body)

    expectFailure(await as(["devices", "revoke", phone], stranger), "not_found")
    expect(await count("device_links", owner)).toBe(2)
    const revoked = await as(["devices", "revoke", phone])
    expect(revoked).toMatchObject({ code: 0, stderr: "", stdout: `revoked device ${phone}\n` })
    expect(await count("device_links", owner)).toBe(1)
    expectFailure(await as(["devices", "revoke", phone]), "not_found")
    expectFailure(await as(["devices", "revoke", "not/an id"]), "validation_failed")
    expect((await as(["devices", "list"], stranger)).stdout).toBe("no linked devices\n")
  }, slow)

  it("needs account:write to revoke and account:read to list", async () => {
    const reader = await person("user", ["account:read"])
    const writer = await person("user", ["packages:read"])
    const id = await link(reader, "tablet")
    expectFailure(await clark(["devices", "revoke", id, "--token", reader.token]), "forbidden")
    expect(await count("device_links", reader)).toBe(1)
    expectFailure(await clark(["devices", "list", "--token", writer.token]), "forbidden")
    expectFailure(await clark(["devices", "list"]), "unauthorized")
  }, slow)
})

describe("clark market grants", () => {
  it("lists the OAuth grants, and revoking one refuses its access token at once", async () => {
    const owner = await person("user", ["account:read", "account:write"])
    const accessToken = await grant(owner, "notes-app")
    await grant(owner, "calendar-app")
    expect((await me(accessToken)).status).toBe(200)
    const as = (args: ReadonlyArray<string>) => clark([...args, "--token", owner.token])

    const listed = await as(["grants", "list"])
    expect(listed).toMatchObject({ code: 0, stderr: "" })
    const lines = listed.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^ID\s+CLIENT\s+SCOPES\s+GRANTED$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(1, 3)).sort()).toEqual([
      ["calendar-app", "account:read"],
      ["notes-app", "account:read"]
    ])
    const json = JSON.parse((await as(["grants", "list", "--json"])).stdout) as { items: Array<{ id: string; clientId: string }> }
    expect(json).toEqual((await server.request("/api/v1/me/grants", bearer(owner.token))).body)
    const notes = json.items.find((item) => item.clientId === "notes-app")!.id

    const revoked = await as(["grants", "revoke", notes])
    expect(revoked).toMatchObject({ code: 0, stderr: "", stdout: `revoked grant ${notes}; its access tokens no longer work\n` })
    expect((await me(accessToken)).status).toBe(401)
    expect(await count("oauth_grants", owner)).toBe(1)
    expectFailure(await as(["grants", "revoke", notes]), "not_found")
    expect((await as(["grants", "list"])).stdout).not.toContain("notes-app")
    expect((await clark(["grants", "list", "--token", (await person("user", ["account:read"])).token])).stdout).toBe("no OAuth grants\n")
  }, slow)
})

describe("clark market admin and audit", () => {
  it("suspends an account (its token refused), keeps the first instant, lifts it, and audits both", async () => {
    const root = await person("admin", ["admin"])
    const target = await person("user", ["account:read"])
    const as = (args: ReadonlyArray<string>) => clark([...args, "--token", root.token])

    const suspended = await as(["admin", "suspend", target.id, "--reason", "abuse report"])
    expect(suspended).toMatchObject({ code: 0, stderr: "" })
    const since = /^(usr_\S+): suspended since (\S+)\n$/.exec(suspended.stdout)
    expect(since?.[1]).toBe(target.id)
    const refused = await me(target.token)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ code: "forbidden", message: "The account is suspended" })
    expectFailure(await clark(["me", "--token", target.token]), "forbidden")

    const again = await as(["admin", "suspend", target.id, "--json"])
    expect(JSON.parse(again.stdout)).toEqual({ id: target.id, suspendedAt: since![2] })

    const lifted = await as(["admin", "unsuspend", target.id])
    expect(lifted).toMatchObject({ code: 0, stderr: "", stdout: `${target.id}: not suspended\n` })
    expect((await me(target.token)).status).toBe(200)

    const log = await as(["audit", "--target", target.id])
    expect(log).toMatchObject({ code: 0, stderr: "" })
    const rows = log.stdout.trimEnd().split("\n")
    expect(rows[0]).toMatch(/^AT\s+ACTOR\s+ACTION\s+TARGET\s+BEFORE\s+AFTER$/)
    expect(rows.slice(1).map((row) => row.split(/\s+/).slice(1, 4))).toEqual([
      [root.id, "account.unsuspend", `account:${target.id}`],
      [root.id, "account.suspend", `account:${target.id}`]
    ])
    expect(rows[2]).toContain(`{"suspendedAt":null}`)
    const json = JSON.parse((await as(["audit", "--target", target.id, "--json"])).stdout)
    expect(json.items[1]).toMatchObject({
      actorId: root.id,
      action: "account.suspend",
      target: target.id,
      before: { suspendedAt: null },
      after: { suspendedAt: since![2], reason: "abuse report" }
    })
    expect(json.nextCursor).toBeNull()
  }, slow)

  it("pages the audit log with --limit and --cursor, and filters by action", async () => {
    const root = await person("admin", ["admin"])
    for (let i = 0; i < 3; i++) {
      const target = await person("user", ["account:read"])
      expect((await clark(["admin", "suspend", target.id, "--token", root.token])).code).toBe(0)
    }
    const as = (args: ReadonlyArray<string>) => clark([...args, "--actor", root.id, "--token", root.token])
    const first = await as(["audit", "--limit", "2"])
    expect(first.code).toBe(0)
    const more = /\n\nmore: --cursor (\d+)\n$/.exec(first.stdout)
    expect(more).not.toBeNull()
    expect(first.stdout.split("\n\n")[0]!.split("\n")).toHaveLength(3)
    const second = await as(["audit", "--limit", "2", "--cursor", more![1]!])
    expect(second.stdout.trimEnd().split("\n")).toHaveLength(2)
    expect(second.stdout).not.toContain("more:")
    const firstJson = JSON.parse((await as(["audit", "--limit", "2", "--json"])).stdout)
    const secondJson = JSON.parse((await as(["audit", "--limit", "2", "--cursor", more![1]!, "--json"])).stdout)
    const ids = [...firstJson.items, ...secondJson.items].map((entry: { id: string }) => entry.id)
    expect(new Set(ids).size).toBe(3)
    const byAction = JSON.parse((await as(["audit", "--action", "account.unsuspend", "--json"])).stdout)
    expect(byAction).toEqual({ items: [], nextCursor: null })
    expectFailure(await as(["audit", "--limit", "0"]), "validation_failed")
  }, slow)

  it("refuses a non-admin, an unknown account, and suspending oneself, changing nothing", async () => {
    const root = await person("admin", ["admin"])
    const user = await person("user", ["account:read", "account:write"])
    expectFailure(await clark(["admin", "suspend", root.id, "--token", user.token]), "forbidden")
    expectFailure(await clark(["audit", "--token", user.token]), "forbidden")
    expect((await me(root.token)).status).toBe(200)
    expectFailure(await clark(["admin", "suspend", "usr_nobody", "--token", root.token]), "not_found")
    expectFailure(await clark(["admin", "suspend", root.id, "--token", root.token]), "conflict")
    expect((await me(root.token)).status).toBe(200)
    const audited = JSON.parse((await clark(["audit", "--actor", root.id, "--json", "--token", root.token])).stdout)
    expect(audited.items).toEqual([])
  }, slow)
})

describe("clark market: secrets", () => {
  it("never prints a token or session token, in any output of any command above", () => {
    expectNoSecrets(20)
    expect(made.length).toBeGreaterThan(10)
    for (const { stderr, stdout } of outputs) {
      for (const secret of made) expect(`${stdout}${stderr}`).not.toContain(secret)
    }
  })
})
