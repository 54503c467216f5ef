/**
 * The real `clark marketplace admin` commands, end to end on SQLite: migrate,
 * seed, import, user, token and session accounts, oauth-token and publisher
 * membership, checked by exit code, output and what the database holds.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import {
  clark,
  countRows,
  databaseLine,
  document,
  lifetimeMillis,
  memberships,
  oauthRow,
  oauthTokenPattern,
  oauthTokens,
  packageNames,
  query,
  slow,
  sqliteUrl,
  tmp,
  useTempDir,
  writeJson
} from "./MarketplaceFixture.js"

useTempDir()

describe("marketplace admin", () => {
  it("migrate creates the schema and exits 0", async () => {
    const url = sqliteUrl("migrate.db")
    const result = await clark(["admin", "migrate", "--database", url])
    expect(result).toMatchObject({ code: 0, signal: null })
    expect(result.stdout).toContain("Migrations applied")
    expect(await countRows(url, "packages")).toBe(0)
    // Running it again is harmless.
    expect((await clark(["admin", "migrate", "--database", url])).code).toBe(0)
  }, slow)

  it("seed --demo loads the demo catalogue", async () => {
    const url = sqliteUrl("demo.db")
    const result = await clark(["admin", "seed", "--demo", "--database", url])
    expect(result).toMatchObject({ code: 0, signal: null })
    const counts = JSON.parse(/Demo catalogue loaded: (\{.*\})/.exec(result.stdout)?.[1] ?? "null")
    const packages = await countRows(url, "packages")
    expect(packages).toBeGreaterThanOrEqual(150)
    expect(counts).toMatchObject({ packages, versions: await countRows(url, "package_versions") })
  }, slow)

  it("seed --synthetic 2500 writes 2500 packages", async () => {
    const url = sqliteUrl("synthetic.db")
    const result = await clark(["admin", "seed", "--synthetic", "2500", "--database", url])
    expect(result).toMatchObject({ code: 0, signal: null })
    expect(result.stdout).toContain("2500 synthetic packages written")
    expect(await countRows(url, "packages")).toBe(2500)
  }, slow)

  it.each([["0"], ["1000001"]])("seed --synthetic %s is refused", async (count) => {
    const url = sqliteUrl(`synthetic-${count}.db`)
    const result = await clark(["admin", "seed", "--synthetic", count, "--database", url])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain("--synthetic must be 1 to 1,000,000")
    expect(await countRows(url, "packages")).toBe(0)
  }, slow)

  it("seed without --demo or --synthetic is refused", async () => {
    const result = await clark(["admin", "seed", "--database", sqliteUrl("nothing.db")])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain("say what to seed")
  }, slow)

  describe("import", () => {
    const url = () => sqliteUrl("import.db")

    beforeAll(async () => {
      const result = await clark(["admin", "import", writeJson("good.json", document), "--database", url()])
      expect(result.stderr).toBe(databaseLine(url()))
      expect(result.code).toBe(0)
      expect(result.stdout).toContain(
        `Imported: ${JSON.stringify({ categories: 1, publishers: 1, packages: 2, versions: 3, collections: 0, pages: 0 })}`
      )
    }, slow)

    it("loads a file", async () => {
      expect(await packageNames(url())).toEqual(["alpha", "beta"])
      expect(await countRows(url(), "package_versions")).toBe(3)
    })

    // Refusals change nothing, so they may run side by side.
    it.concurrent.each([
      {
        label: "an unknown field",
        file: "unknown-field.json",
        content: { ...document, packages: [{ name: "gamma", displayName: "Gamma" }, { name: "delta", displayName: "Delta", colour: "red" }] },
        message: "Import refused at packages[1].colour"
      },
      {
        label: "an invalid value",
        file: "bad-status.json",
        content: { packages: [{ name: "gamma", displayName: "Gamma", curationStatus: "approved" }] },
        message: "Import refused at packages[0].curationStatus"
      },
      {
        label: "an unknown category in its last package",
        file: "unknown-category.json",
        content: {
          categories: [{ slug: "games", name: "Games" }],
          packages: [{ name: "gamma", displayName: "Gamma", categorySlug: "games" }, { name: "delta", displayName: "Delta", categorySlug: "missing" }]
        },
        message: "Import refused at packages[1].categorySlug"
      },
      { label: "text that is not JSON", file: "not-json.json", content: "{ nope", message: "is not JSON" }
    ])("refuses a file with $label, naming it, and stores nothing", async ({ content, file, message }) => {
      const written = typeof content === "string"
        ? (fs.writeFileSync(path.join(tmp, file), content), path.join(tmp, file))
        : writeJson(file, content)
      const result = await clark(["admin", "import", written, "--database", url()])
      expect(result.code).not.toBe(0)
      expect(result.output).toContain(message)
      expect(await packageNames(url())).toEqual(["alpha", "beta"])
      expect(await countRows(url(), "categories")).toBe(1)
    }, slow)

    it("refuses a file that does not exist", async () => {
      const result = await clark(["admin", "import", path.join(tmp, "absent.json"), "--database", url()])
      expect(result.code).not.toBe(0)
      expect(result.output).toContain("absent.json")
    }, slow)
  })

  it("refuses a --database that is neither sqlite: nor postgres://", async () => {
    const result = await clark(["admin", "migrate", "--database", "mysql://localhost/x"])
    expect(result.code).not.toBe(0)
    expect(result.output).toContain("--database must be sqlite:PATH or postgres://")
  }, slow)
})

describe("marketplace admin accounts", () => {
  it("creates a user, issues a token printed once and stored as a hash, a session, and revokes the token", async () => {
    const url = sqliteUrl("accounts.db")
    expect((await clark(["admin", "migrate", "--database", url])).code).toBe(0)
    const created = await clark(["admin", "user", "create", "--email", "Ada@Example.com", "--name", "Ada", "--role", "admin", "--database", url])
    expect(created).toMatchObject({ code: 0 })
    expect(created.stdout).toMatch(/^Created admin ada@example\.com \(usr_/)
    const again = await clark(["admin", "user", "create", "--email", "ada@example.com", "--database", url])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("exists already")
    expect(again.stderr).not.toMatch(/\bat file:/)

    const token = await clark(["admin", "token", "create", "--email", "ada@example.com", "--scopes", "packages:read,packages:curate", "--expires-in", "30d", "--database", url])
    expect(token.code).toBe(0)
    const value = token.stdout.trim()
    expect(value).toMatch(/^cmk_[0-9A-Za-z]{38}$/)
    const hashes = await query(url, (sql) =>
      sql<{ tokenHash: string; scopes: string }>`SELECT token_hash, scopes FROM api_tokens`)
    expect(hashes).toHaveLength(1)
    expect(hashes[0]!.tokenHash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(hashes)).not.toContain(value.slice(4, 20))

    const session = await clark(["admin", "session", "create", "--email", "ada@example.com", "--database", url])
    expect(session.code).toBe(0)
    expect(session.stdout.trim()).toMatch(/^cms_/)

    expect((await clark(["admin", "token", "create", "--email", "nobody@x.io", "--scopes", "packages:read", "--database", url])).stderr)
      .toContain("No account with the email nobody@x.io")
    expect((await clark(["admin", "token", "create", "--email", "ada@example.com", "--scopes", "nope", "--database", url])).code)
      .toBe(1)

    const revoked = await clark(["admin", "token", "revoke", value, "--database", url])
    expect(revoked).toMatchObject({ code: 0 })
    expect(revoked.stdout).toContain("Revoked")
    const rows = await query(url, (sql) => sql<{ revokedAt: string | null }>`SELECT revoked_at FROM api_tokens`)
    expect(rows[0]!.revokedAt).not.toBeNull()
    expect((await clark(["admin", "token", "revoke", value, "--database", url])).code).toBe(1)
  }, slow)
})

describe("marketplace admin oauth-token and publisher", () => {
  const url = () => sqliteUrl("members.db")

  beforeAll(async () => {
    expect((await clark(["admin", "import", writeJson("members.json", document), "--database", url()])).code).toBe(0)
    expect((await clark(["admin", "user", "create", "--email", "Bea@Example.com", "--database", url()])).code).toBe(0)
  }, slow)

  it("oauth-token create prints a cmo_ token once and stores its hash, audience, client, scopes and expiry", async () => {
    // Independent commands, run side by side to keep the suite fast.
    const [byDefault, explicit, fromEnv, notAllowed, unknown] = await Promise.all([
      clark(["admin", "oauth-token", "create", "--email", "bea@example.com", "--scopes", "packages:read,publishers:write", "--database", url()]),
      clark([
        "admin", "oauth-token", "create", "--email", "BEA@example.com", "--scopes", "packages:read",
        "--audience", "https://api.example.com/api/v1", "--client-id", "desktop", "--expires-in", "30m", "--database", url()
      ]),
      clark(["admin", "oauth-token", "create", "--email", "bea@example.com", "--scopes", "packages:read", "--database", url()], {
        env: { MARKETPLACE_PUBLIC_ORIGIN: "https://market.example" }
      }),
      clark(["admin", "oauth-token", "create", "--email", "bea@example.com", "--scopes", "packages:read,packages:curate", "--database", url()]),
      clark(["admin", "oauth-token", "create", "--email", "nobody@example.com", "--scopes", "packages:read", "--database", url()])
    ])
    for (const issued of [byDefault, explicit, fromEnv]) {
      expect(issued).toMatchObject({ code: 0, stderr: databaseLine(url()) })
      expect(issued.stdout).toMatch(oauthTokenPattern)
    }
    expect(notAllowed.code).toBe(1)
    expect(notAllowed.stderr).toContain("The account's role does not allow: packages:curate")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("No account with the email nobody@example.com")
    for (const refused of [notAllowed, unknown]) expect(refused.stdout).not.toContain("cmo_")

    const rows = await oauthTokens(url())
    expect(rows).toHaveLength(3)
    const stored = JSON.stringify(rows)
    for (const issued of [byDefault, explicit, fromEnv]) expect(stored).not.toContain(issued.stdout.trim().slice(4, 20))

    const defaults = oauthRow(rows, byDefault.stdout.trim())
    expect(defaults).toMatchObject({ audience: "http://127.0.0.1:8787/api/v1", clientId: "clark-admin" })
    expect(JSON.parse(defaults?.scopes ?? "null")).toEqual(["packages:read", "publishers:write"])
    expect(Math.abs(lifetimeMillis(defaults) - 60 * 60_000)).toBeLessThan(60_000)

    const chosen = oauthRow(rows, explicit.stdout.trim())
    expect(chosen).toMatchObject({ audience: "https://api.example.com/api/v1", clientId: "desktop" })
    expect(Math.abs(lifetimeMillis(chosen) - 30 * 60_000)).toBeLessThan(60_000)

    expect(oauthRow(rows, fromEnv.stdout.trim())?.audience).toBe("https://market.example/api/v1")
  }, slow)

  it("publisher add-member adds an owner by default, changes the role, and refuses unknown publishers and users", async () => {
    const [added, unknownPublisher, unknownUser] = await Promise.all([
      clark(["admin", "publisher", "add-member", "--email", "BEA@example.com", "--publisher", "acme", "--database", url()]),
      clark(["admin", "publisher", "add-member", "--email", "bea@example.com", "--publisher", "nowhere", "--database", url()]),
      clark(["admin", "publisher", "add-member", "--email", "nobody@example.com", "--publisher", "acme", "--database", url()])
    ])
    expect(added).toMatchObject({ code: 0, stderr: databaseLine(url()) })
    expect(unknownPublisher.code).toBe(1)
    expect(unknownPublisher.stderr).toContain("No publisher with the slug nowhere")
    expect(unknownUser.code).toBe(1)
    expect(unknownUser.stderr).toContain("No account with the email nobody@example.com")
    expect(await memberships(url())).toEqual([{ slug: "acme", email: "bea@example.com", role: "owner" }])

    const changed = await clark(["admin", "publisher", "add-member", "--email", "bea@example.com", "--publisher", "acme", "--role", "member", "--database", url()])
    expect(changed).toMatchObject({ code: 0, stderr: databaseLine(url()) })
    expect(await memberships(url())).toEqual([{ slug: "acme", email: "bea@example.com", role: "member" }])
  }, slow)
})
