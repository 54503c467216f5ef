/**
 * Which database the real `clark marketplace admin` commands open: refusals
 * without one (creating nothing), MARKETPLACE_DATABASE against --database, and
 * the same commands on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { postgresDatabase, type TestDatabase } from "../support/Databases.js"
import {
  clark,
  countRows,
  databaseLine,
  document,
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

describe("admin commands that need existing data", () => {
  /** An empty folder: the default ./data/marketplace.db does not exist there. */
  let cwd: string
  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(tmp, "elsewhere-"))
  })

  const needing: ReadonlyArray<ReadonlyArray<string>> = [
    ["admin", "user", "create", "--email", "ada@example.com"],
    ["admin", "token", "create", "--email", "ada@example.com", "--scopes", "packages:read"],
    ["admin", "session", "create", "--email", "ada@example.com"],
    ["admin", "oauth-token", "create", "--email", "ada@example.com", "--scopes", "packages:read"],
    ["admin", "publisher", "add-member", "--email", "ada@example.com", "--publisher", "acme"]
  ]

  it("refuse, naming the database, when run from a folder without one, and create nothing", async () => {
    const results = await Promise.all(needing.map((args) => clark(args, { cwd })))
    const expected = `sqlite:${path.join(fs.realpathSync(cwd), "data", "marketplace.db")}`
    for (const result of results) {
      expect(result.code).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        databaseLine(expected) +
          `No marketplace database at ${expected}. Create one with \`clark marketplace admin migrate\` (or seed, import), ` +
          "or choose an existing one with --database or MARKETPLACE_DATABASE.\n"
      )
    }
    expect(fs.existsSync(path.join(cwd, "data"))).toBe(false)
  }, slow)

  it("refuse a named file that does not exist, or one without the marketplace's schema, leaving it as it was", async () => {
    const absent = sqliteUrl("absent.db")
    const emptyFile = path.join(tmp, "empty.db")
    fs.writeFileSync(emptyFile, "")
    for (const url of [absent, `sqlite:${emptyFile}`]) {
      const result = await clark([...needing[0]!, "--database", url])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`No marketplace database at ${url}.`)
    }
    expect(fs.existsSync(absent.slice("sqlite:".length))).toBe(false)
    expect(fs.statSync(emptyFile).size).toBe(0)
  }, slow)

  it("run once migrate has made the database, in the folder it was made in", async () => {
    expect((await clark(["admin", "migrate"], { cwd })).code).toBe(0)
    const created = await clark(needing[0]!, { cwd })
    expect(created.code).toBe(0)
    expect(created.stderr).toBe(databaseLine(`sqlite:${path.join(fs.realpathSync(cwd), "data", "marketplace.db")}`))
  }, slow)
})

describe("MARKETPLACE_DATABASE", () => {
  /** Runs from an empty directory, so a fallback to the default ./data/marketplace.db would show (and touch nothing). */
  let cwd: string
  beforeAll(() => {
    cwd = fs.mkdtempSync(path.join(tmp, "cwd-"))
  })

  it("is honoured when --database is absent", async () => {
    const url = sqliteUrl("from-env.db")
    const result = await clark(["admin", "import", writeJson("env.json", document)], { cwd, env: { MARKETPLACE_DATABASE: url } })
    expect(result).toMatchObject({ code: 0, signal: null })
    expect(await packageNames(url)).toEqual(["alpha", "beta"])
    expect(fs.existsSync(path.join(cwd, "data"))).toBe(false)
  }, slow)

  it("yields to --database", async () => {
    const fromEnv = sqliteUrl("ignored-env.db")
    const fromOption = sqliteUrl("from-option.db")
    const result = await clark(["admin", "import", writeJson("option.json", document), "--database", fromOption], {
      cwd,
      env: { MARKETPLACE_DATABASE: fromEnv }
    })
    expect(result.code).toBe(0)
    expect(await packageNames(fromOption)).toEqual(["alpha", "beta"])
    expect(fs.existsSync(fromEnv.slice("sqlite:".length))).toBe(false)
  }, slow)

  it("is refused, without repeating its value, when it is not a database URL", async () => {
    const result = await clark(["admin", "migrate"], { cwd, env: { MARKETPLACE_DATABASE: "mysql://secret@localhost/x" } })
    expect(result.code).not.toBe(0)
    expect(result.output).toContain("MARKETPLACE_DATABASE")
    expect(result.output).not.toContain("secret")
    expect(fs.existsSync(path.join(cwd, "data"))).toBe(false)
  }, slow)
})

describe("marketplace admin on PostgreSQL", () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await postgresDatabase()
  })
  afterAll(() => database.drop())

  it("refuses user create on a database without the schema, and creates no table there", async () => {
    const refused = await clark(["admin", "user", "create", "--email", "pat@example.com", "--database", database.url])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`No marketplace database at ${database.url}.`)
    const tables = await query(database.url, (sql) =>
      sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = 'public'`)
    expect(Number(tables[0]?.n)).toBe(0)
  }, slow)

  it("migrate then seed --demo", async () => {
    const migrated = await clark(["admin", "migrate", "--database", database.url])
    expect(migrated).toMatchObject({ code: 0, signal: null })
    expect(await countRows(database.url, "packages")).toBe(0)
    const seeded = await clark(["admin", "seed", "--demo", "--database", database.url])
    expect(seeded).toMatchObject({ code: 0, signal: null })
    expect(await countRows(database.url, "packages")).toBeGreaterThanOrEqual(150)
  }, slow)

  it("user create, then publisher add-member and oauth-token create", async () => {
    const created = await clark(["admin", "user", "create", "--email", "pat@example.com", "--database", database.url])
    expect(created.code).toBe(0)
    // Written directly (the schema exists now), so this test does not depend on the demo seed above.
    await query(database.url, (sql) =>
      sql`INSERT INTO publishers (slug, name, verified, created_at) VALUES ('pg-members', 'PG members', false, ${new Date().toISOString()})`)
    const [member, token] = await Promise.all([
      clark(["admin", "publisher", "add-member", "--email", "pat@example.com", "--publisher", "pg-members", "--role", "member", "--database", database.url]),
      clark(["admin", "oauth-token", "create", "--email", "pat@example.com", "--scopes", "packages:read", "--database", database.url])
    ])
    expect(member).toMatchObject({ code: 0, stderr: databaseLine(database.url) })
    expect(await memberships(database.url)).toEqual([{ slug: "pg-members", email: "pat@example.com", role: "member" }])
    expect(token).toMatchObject({ code: 0, stderr: databaseLine(database.url) })
    expect(token.stdout).toMatch(oauthTokenPattern)
    expect(oauthRow(await oauthTokens(database.url), token.stdout.trim())).toMatchObject({
      audience: "http://127.0.0.1:8787/api/v1",
      clientId: "clark-admin"
    })
  }, slow)
})
