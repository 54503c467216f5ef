/**
 * The real `clark marketplace` command, end to end: each test spawns
 * the compiled `node bin/clark.js …` against temporary databases and checks
 * exit codes, output and what the database holds afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as TokenFormat from "../../services/marketplace/TokenFormat.js"
import { postgresDatabase, type TestDatabase } from "../support/Databases.js"
import { clarkArgs, root, runClark } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"


/** Each command is killed after this long. */
const commandTimeout = 90_000
const slow = 120_000

/** The environment of every command: no database chosen unless a test says so. */
const baseEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const {
    LOG_FORMAT: _f,
    LOG_LEVEL: _l,
    MARKETPLACE_DATABASE: _d,
    MARKETPLACE_PORT: _p,
    MARKETPLACE_PUBLIC_ORIGIN: _o,
    ...rest
  } = process.env
  return { ...rest, ...extra }
}

const clark = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Readonly<Record<string, string>>; readonly cwd?: string } = {}
) =>
  runClark(["marketplace", ...args], { env: baseEnv(options.env ?? {}), timeout: commandTimeout, cwd: options.cwd })

/** Runs a query on a database URL with the product's own client (no migrations run). */
const query = <A>(url: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(SqlClient.SqlClient, use).pipe(
    Effect.provide(Database.client(Database.parseDatabaseUrl(url)!))
  )))

const countRows = (url: string, table: string) =>
  query(url, (sql) =>
    sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM ${sql(table)}`.pipe(Effect.map(([row]) => Number(row?.n))))

const packageNames = (url: string) =>
  query(url, (sql) =>
    sql<{ name: string }>`SELECT name FROM packages ORDER BY name`.pipe(Effect.map((rows) => rows.map((r) => r.name))))

let tmp: string
const sqliteUrl = (name: string) => `sqlite:${path.join(tmp, name)}`
/** What every command that opens a database says on stderr first. */
const databaseLine = (url: string) => `Database: ${url}\n`
const writeJson = (name: string, value: unknown) => {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, JSON.stringify(value))
  return file
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-cli-"))
})
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

const version = (v: string, at: string) => ({ version: v, publishedAt: at, indexedAt: at, registryIntegrity: `sha512-${v}` })
const document = {
  categories: [{ slug: "tools", name: "Tools" }],
  publishers: [{ slug: "acme", name: "Acme" }],
  packages: [
    { name: "alpha", displayName: "Alpha", publisher: "acme", categorySlug: "tools", curationStatus: "listed", versions: [version("1.0.0", "2024-01-01T00:00:00Z")] },
    { name: "beta", displayName: "Beta", curationStatus: "featured", versions: [version("0.1.0", "2024-02-01T00:00:00Z"), version("0.2.0", "2024-03-01T00:00:00Z")] }
  ]
}

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

interface OAuthRow {
  readonly tokenHash: string
  readonly audience: string
  readonly clientId: string
  readonly scopes: string
  readonly createdAt: string
  readonly expiresAt: string
}

const oauthTokens = (url: string) =>
  query(url, (sql) =>
    sql<OAuthRow>`SELECT t.token_hash, t.audience, g.client_id, g.scopes, t.created_at, t.expires_at
      FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id`)

/** The stored row of a token, found by its hash. */
const oauthRow = (rows: ReadonlyArray<OAuthRow>, token: string) => rows.find((row) => row.tokenHash === TokenFormat.hash(token))

const lifetimeMillis = (row: OAuthRow | undefined) => Date.parse(row?.expiresAt ?? "") - Date.parse(row?.createdAt ?? "")

const memberships = (url: string) =>
  query(url, (sql) =>
    sql<{ slug: string; email: string; role: string }>`SELECT p.slug, u.email, m.role
      FROM publisher_members m JOIN publishers p ON p.id = m.publisher_id JOIN users u ON u.id = m.user_id
      ORDER BY p.slug, u.email`)

const oauthTokenPattern = /^cmo_[0-9A-Za-z]{38}\n$/

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

// ---------------------------------------------------------------------------
// serve

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.once("exit", (code) => resolve(code))
  })

/** Polls `url` until it answers 200, with a bounded number of real requests. */
const waitForHealth = async (url: string, child: ChildProcess, output: () => string) => {
  const attempts = 300
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${output()}`)
    const status = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => undefined)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`no 200 from ${url} after ${attempts} attempts:\n${output()}`)
}

/** Starts `clark marketplace serve` with `args`, collecting its output. */
const startServe = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) => {
  let output = ""
  const child = spawn(process.execPath, clarkArgs(["marketplace", "serve", ...args]), {
    cwd: root,
    env: baseEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: commandTimeout
  })
  child.stdout.on("data", (chunk) => (output += String(chunk)))
  child.stderr.on("data", (chunk) => (output += String(chunk)))
  return { child, output: () => output }
}

describe("marketplace serve on first run", () => {
  it("stops with one clear line and exit 1 when the port is taken, before touching the database", async () => {
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const port = (holder.address() as net.AddressInfo).port
    try {
      const url = sqliteUrl("port-taken.db")
      const result = await clark(["serve", "--database", url, "--port", String(port)])
      expect(result.code).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toBe(
        `Cannot listen on 127.0.0.1:${port}: the port is already in use. ` +
          "Stop what holds it or choose another with --port or MARKETPLACE_PORT.\n"
      )
      expect(fs.existsSync(url.slice("sqlite:".length))).toBe(false)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  }, slow)

  it("names its base URL and description, and takes its public origin from the address it is bound to", async () => {
    const port = await freePort()
    const url = sqliteUrl("first-run.db")
    expect((await clark(["admin", "migrate", "--database", url])).code).toBe(0)
    expect((await clark(["admin", "user", "create", "--email", "olga@example.com", "--database", url])).code).toBe(0)
    const issue = (env: Readonly<Record<string, string>>) =>
      clark(["admin", "oauth-token", "create", "--email", "olga@example.com", "--scopes", "packages:read", "--database", url], { env })
    // The admin CLI's default audience follows MARKETPLACE_HOST and MARKETPLACE_PORT as the server's does.
    const [here, elsewhere] = await Promise.all([issue({ MARKETPLACE_PORT: String(port) }), issue({})])
    expect([here.code, elsewhere.code]).toEqual([0, 0])

    const { child, output } = startServe(["--database", url, "--port", String(port)])
    try {
      const base = `http://127.0.0.1:${port}/api/v1`
      await waitForHealth(`${base}/health`, child, output)
      expect(output()).toContain(`Marketplace API at ${base}, described at ${base}/openapi.json`)
      expect(output()).toContain(databaseLine(url))
      const me = (token: string) => fetch(`${base}/me`, { headers: { authorization: `Bearer ${token.trim()}` } })
      const accepted = await me(here.stdout)
      expect(accepted.status).toBe(200)
      const refused = await me(elsewhere.stdout)
      expect(refused.status).toBe(401)
      expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
        `The OAuth access token is for http://127.0.0.1:8787/api/v1, not for this API (${base})`
      )
    } finally {
      child.kill("SIGKILL")
      await exited(child)
    }
  }, slow)
})

describe("marketplace serve", () => {
  let child: ChildProcess | undefined
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      child.kill("SIGKILL")
      await exited(child)
    }
  })

  it("serves a demo-seeded SQLite catalogue until killed", async () => {
    const port = await freePort()
    const url = sqliteUrl("serve.db")
    let output = ""
    const started = spawn(
      process.execPath,
      clarkArgs(["marketplace", "serve", "--database", url, "--port", String(port), "--seed-demo-if-empty"]),
      { cwd: root, env: baseEnv({}), stdio: ["ignore", "pipe", "pipe"], timeout: commandTimeout }
    )
    child = started
    started.stdout.on("data", (chunk) => (output += String(chunk)))
    started.stderr.on("data", (chunk) => (output += String(chunk)))

    const base = `http://127.0.0.1:${port}/api/v1`
    await waitForHealth(`${base}/health`, started, () => output)

    const response = await fetch(`${base}/packages`)
    expect(response.status).toBe(200)
    const body = await response.json() as { items: Array<{ curationStatus: string }>; nextCursor: string | null }
    expect(body.items).toHaveLength(20)
    expect(body.items.every((item) => item.curationStatus === "listed" || item.curationStatus === "featured")).toBe(true)
    expect(typeof body.nextCursor).toBe("string")

    started.kill("SIGTERM")
    await exited(started)
    expect(started.exitCode !== null || started.signalCode !== null).toBe(true)
    expect(await countRows(url, "packages")).toBeGreaterThanOrEqual(150)
  }, slow)
})
