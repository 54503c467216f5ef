/**
 * The real `clark market` client, end to end: a marketplace server started in
 * this process on SQLite, and each command run as its own process
 * (the compiled `node bin/clark.js market …`) with a clean environment whose
 * HOME and XDG_CONFIG_HOME point into a temporary directory.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Scope } from "../../schema/marketplace/Account.js"
import { Credentials } from "../../services/marketplace/Credentials.js"
import { DatabaseHealth } from "../../services/marketplace/DatabaseHealth.js"
import { type RunningMarketplace, startMarketplace } from "../support/MarketplaceServer.js"
import { spawn } from "node:child_process"
import { clarkArgs, type Outcome, root, runClark } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"

const commandTimeout = 60_000
const slow = 120_000

let tmp: string
let home: string
let xdg: string
let server: RunningMarketplace

/** Every output of every command, to prove at the end that no token was ever printed. */
const outputs: Array<Outcome> = []

/** Nothing of the caller's marketplace settings or config files: HOME and XDG_CONFIG_HOME are temporary. */
const cleanEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const {
    CLARK_CONFIG: _c,
    CLARK_MARKETPLACE_TOKEN: _t,
    CLARK_MARKETPLACE_URL: _u,
    LOG_FORMAT: _f,
    LOG_LEVEL: _l,
    XDG_CONFIG_HOME: _x,
    ...rest
  } = process.env
  return { ...rest, HOME: home, XDG_CONFIG_HOME: xdg, ...extra }
}

const run = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) => {
  const outcome = await runClark(["market", ...args], { env: cleanEnv(env), timeout: commandTimeout })
  outputs.push(outcome)
  return outcome
}

/** A command against the test server, configured by the environment unless the test says otherwise. */
const clark = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = { CLARK_MARKETPLACE_URL: server.baseUrl }) =>
  run(args, env)

const expectFailure = (outcome: Outcome, code: string) => {
  expect(outcome.code).toBe(1)
  expect(outcome.stdout).toBe("")
  expect(outcome.stderr).toMatch(new RegExp(`^${code}: \\S`))
  expect(outcome.stderr.trim().split("\n")).toHaveLength(1)
}

const writeFile = (name: string, content: string) => {
  const file = path.join(tmp, name)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
  return file
}

// ---------------------------------------------------------------------------
// the catalogue and the accounts

const at = (day: number) => new Date(Date.UTC(2024, 0, day)).toISOString()
const version = (number: string, day: number) => ({
  version: number,
  publishedAt: at(day),
  indexedAt: at(day),
  registryIntegrity: `sha512-${number}`
})

const longDescription = "Widgets for every dashboard: charts, gauges, tables and maps, with themes and keyboard support"

const pageDocument = (title: string, text: string) => ({
  schemaVersion: 1,
  layout: { id: "default", version: 1 },
  meta: { title, description: `About ${title}`, locale: "en", noindex: false },
  blocks: [
    { id: "h1", type: "heading", version: 1, props: { level: 1, text: title } },
    { id: "p1", type: "paragraph", version: 1, props: { text } }
  ]
})

const document = {
  categories: [{ slug: "tools", name: "Tools", description: "Things that help" }, { slug: "empty", name: "Empty" }],
  collections: [
    {
      slug: "starter",
      title: "Starter kit",
      description: "Where to begin",
      published: true,
      items: [{ packageName: "beta-tool" }, { packageName: "@acme/widgets", note: "Charts" }]
    },
    { slug: "secret", title: "Not yet", published: false }
  ],
  pages: [
    {
      slug: "docs/intro",
      kind: "docs",
      title: "Introduction",
      revisions: [{ document: pageDocument("Getting started", "Install *one* package."), publishedAt: "2024-05-01T12:00:00Z" }]
    },
    { slug: "draft", kind: "custom", title: "Draft", revisions: [{ document: pageDocument("Draft", "Not yet.") }] }
  ],
  publishers: [{ slug: "acme", name: "Acme", verified: true, owners: ["owner@example.com"] }],
  packages: [
    {
      name: "@acme/widgets",
      displayName: "Acme Widgets",
      description: longDescription,
      publisher: "acme",
      categorySlug: "tools",
      curationStatus: "featured",
      keywords: ["widget", "dashboard"],
      license: "MIT",
      versions: [version("1.0.0", 1), version("1.1.0", 20)]
    },
    {
      name: "alpha-tool",
      displayName: "Alpha Tool",
      description: "A widget helper",
      curationStatus: "listed",
      versions: [version("0.1.0", 5)]
    },
    {
      name: "beta-tool",
      displayName: "Beta Tool",
      description: "Another widget helper",
      curationStatus: "listed",
      versions: [version("2.0.0", 10)]
    },
    { name: "hidden-thing", displayName: "Hidden Thing", curationStatus: "hidden", versions: [version("0.0.1", 2)] }
  ]
}

/** Tokens by who holds them; each user's name tells which token a command used. */
const tokens = { flag: "", env: "", file: "", home: "", curator: "", reader: "", owner: "" }

/** Session tokens (DELETE /me needs a signed-in session), by who holds them. */
const sessions = { owner: "", leaver: "", jsonLeaver: "", ttyKeeper: "", ttyLeaver: "" }

const issue = (credentials: Context.Tag.Service<Credentials>, email: string, scopes: ReadonlyArray<Scope>, role: "admin" | "user") =>
  Effect.gen(function*() {
    yield* credentials.createUser({ email, name: email.split("@")[0]!, role })
    return Redacted.value(yield* credentials.issueApiToken({ email, scopes }))
  })

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-market-"))
  home = path.join(tmp, "home")
  xdg = path.join(tmp, "xdg")
  fs.mkdirSync(home)
  fs.mkdirSync(xdg)
  server = await startMarketplace("sqlite", document, {
    setup: Effect.gen(function*() {
      const credentials = yield* Credentials
      tokens.flag = yield* issue(credentials, "flag@example.com", ["account:read"], "user")
      tokens.env = yield* issue(credentials, "env@example.com", ["account:read"], "user")
      tokens.file = yield* issue(credentials, "file@example.com", ["account:read"], "user")
      tokens.home = yield* issue(credentials, "home@example.com", ["account:read"], "user")
      tokens.curator = yield* issue(credentials, "curator@example.com", ["packages:curate", "account:read"], "admin")
      tokens.reader = yield* issue(credentials, "reader@example.com", ["packages:read"], "admin")
      tokens.owner = yield* issue(credentials, "owner@example.com", ["packages:read", "account:read"], "user")
      sessions.owner = Redacted.value(yield* credentials.issueSession("owner@example.com"))
      const leavers = [
        ["leaver", "leaver@example.com"],
        ["jsonLeaver", "json-leaver@example.com"],
        ["ttyKeeper", "tty-keeper@example.com"],
        ["ttyLeaver", "tty-leaver@example.com"]
      ] as const
      for (const [name, email] of leavers) {
        yield* credentials.createUser({ email, name, role: "user" })
        sessions[name] = Redacted.value(yield* credentials.issueSession(email))
      }
    })
  })
})

afterAll(async () => {
  await server?.close()
  fs.rmSync(tmp, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------

describe("clark market: public reads", () => {
  it("search prints a table, and with --json the API's body", async () => {
    const [table, json, sorted] = await Promise.all([
      clark(["search", "widget", "--limit", "2"]),
      clark(["search", "--json", "widget", "--publisher", "acme"]),
      clark(["search", "--sort", "name", "--curation", "listed", "--json"])
    ])

    expect(table).toMatchObject({ code: 0, stderr: "" })
    const lines = table.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+STATUS\s+DESCRIPTION$/)
    const widgets = lines.find((line) => line.startsWith("@acme/widgets"))
    expect(widgets).toMatch(/^@acme\/widgets\s+1\.1\.0\s+featured\s+Widgets for every dashboard.*…$/)
    expect(widgets).not.toContain("keyboard support")
    expect(lines[2]).toMatch(/^(alpha|beta)-tool\s+\d\.\d\.\d\s+listed\s+(A|Another) widget helper$/)
    expect(lines.slice(3)).toEqual(["", expect.stringMatching(/^more: --cursor \S+$/)])

    expect(json).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/search?q=widget&publisher=acme")).body)
    expect(JSON.parse(json.stdout).items.map((item: { name: string }) => item.name)).toEqual(["@acme/widgets"])

    expect(sorted).toMatchObject({ code: 0, stderr: "" })
    const listed = (await server.request("/api/v1/packages?sort=name&curation=listed")).body
    expect(JSON.parse(sorted.stdout)).toEqual(listed)
    expect(listed.items.map((item: { name: string }) => item.name)).toEqual(["alpha-tool", "beta-tool"])
  }, slow)

  it("show takes a scoped name; install gives the coordinate of the latest, of --version V or of NAME@VERSION; unknown ones are not_found", async () => {
    const [shown, shownJson, latest, pinned, unknownVersion, badName] = await Promise.all([
      clark(["show", "@acme/widgets"]),
      clark(["show", "@acme/widgets", "--json"]),
      clark(["install", "@acme/widgets"]),
      clark(["install", "@acme/widgets", "--version", "1.0.0", "--json"]),
      clark(["install", "@acme/widgets@9.9.9"]),
      clark(["show", "Not A Name"])
    ])

    expect(shown).toMatchObject({ code: 0, stderr: "" })
    expect(shown.stdout).toMatch(/^@acme\/widgets 1\.1\.0 \(Acme Widgets\)\n/)
    expect(shown.stdout).toMatch(/\nstatus\s+featured\n/)
    expect(shown.stdout).toMatch(/\npublisher\s+Acme \(acme, verified\)\n/)
    expect(shown.stdout).toMatch(/\nlicense\s+MIT\n/)
    expect(shown.stdout).toMatch(/\nversions:\n\s+1\.1\.0\s+2024-01-20T00:00:00\.000Z\n\s+1\.0\.0\s+2024-01-01/)
    expect(JSON.parse(shownJson.stdout)).toEqual((await server.request("/api/v1/packages/%40acme%2Fwidgets")).body)

    const coordinate = (await server.request("/api/v1/packages/%40acme%2Fwidgets/install")).body
    expect(coordinate.version).toBe("1.1.0")
    expect(latest).toMatchObject({ code: 0, stderr: "" })
    expect(latest.stdout).toMatch(/^@acme\/widgets@1\.1\.0\n/)
    expect(latest.stdout).toContain(coordinate.cliCommand)
    expect(latest.stdout).toContain(coordinate.openInApp)
    expect(latest.stdout).toContain(coordinate.integrity)

    expect(pinned).toMatchObject({ code: 0, stderr: "" })
    const pinnedBody = (await server.request("/api/v1/packages/%40acme%2Fwidgets/install?version=1.0.0")).body
    expect(pinnedBody.version).toBe("1.0.0")
    expect(JSON.parse(pinned.stdout)).toEqual(pinnedBody)

    expectFailure(unknownVersion, "not_found")
    expectFailure(badName, "validation_failed")
    expect(badName.stderr).toContain("name: must be a registry package name")
  }, slow)
})

describe("clark market: configuration", () => {
  it("me takes the token from the flag, else the environment, else the config file", async () => {
    const configFile = writeFile("config/precedence.json", JSON.stringify({ marketplace: { url: server.baseUrl, token: tokens.file } }))
    const xdgConfig = path.join(tmp, "xdg-only")
    fs.mkdirSync(path.join(xdgConfig, "clark"), { recursive: true })
    fs.copyFileSync(configFile, path.join(xdgConfig, "clark", "config.json"))
    const homeConfig = path.join(tmp, "home-only")
    fs.mkdirSync(path.join(homeConfig, ".config", "clark"), { recursive: true })
    fs.writeFileSync(
      path.join(homeConfig, ".config", "clark", "config.json"),
      JSON.stringify({ other: { kept: true }, marketplace: { url: server.baseUrl, token: tokens.home } })
    )
    const unreachable = `http://127.0.0.1:${await freePort()}`

    const [fromFile, fromXdg, fromHome, fromEnv, fromFlag, envUrlBeatsFile, flagUrlBeatsEnv] = await Promise.all([
      clark(["me"], { CLARK_CONFIG: configFile }),
      clark(["me"], { XDG_CONFIG_HOME: xdgConfig }),
      clark(["me"], { HOME: homeConfig, XDG_CONFIG_HOME: "" }),
      clark(["me"], { CLARK_CONFIG: configFile, CLARK_MARKETPLACE_TOKEN: tokens.env }),
      clark(["me", "--json", "--token", tokens.flag], { CLARK_CONFIG: configFile, CLARK_MARKETPLACE_TOKEN: tokens.env }),
      clark(["me"], {
        CLARK_CONFIG: writeFile("config/bad-url.json", JSON.stringify({ marketplace: { url: unreachable, token: tokens.file } })),
        CLARK_MARKETPLACE_URL: server.baseUrl
      }),
      clark(["me", "--url", server.baseUrl, "--token", tokens.flag], { CLARK_MARKETPLACE_URL: unreachable })
    ])

    const firstLine = (outcome: Outcome) => {
      expect(outcome).toMatchObject({ code: 0, stderr: "" })
      return outcome.stdout.split("\n")[0]
    }
    expect(firstLine(fromFile)).toBe("file <file@example.com>")
    expect(firstLine(fromXdg)).toBe("file <file@example.com>")
    expect(firstLine(fromHome)).toBe("home <home@example.com>")
    expect(firstLine(fromEnv)).toBe("env <env@example.com>")
    expect(fromFile.stdout).toMatch(/\nscopes\s+account:read\n/)
    expect(fromFlag).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(fromFlag.stdout)).toEqual((await server.request("/api/v1/me", bearer(tokens.flag))).body)
    expect(JSON.parse(fromFlag.stdout).email).toBe("flag@example.com")
    expect(firstLine(envUrlBeatsFile)).toBe("file <file@example.com>")
    expect(firstLine(flagUrlBeatsEnv)).toBe("flag <flag@example.com>")
  }, slow)

  it("refuses without a token, with a malformed config file, and at an unreachable URL", async () => {
    const notJson = writeFile("config/not-json.json", `{"marketplace": {"token": "${tokens.flag}"`)
    const wrongShape = writeFile("config/wrong-shape.json", JSON.stringify({ marketplace: { url: server.baseUrl, token: 42 } }))
    const unreachable = `http://127.0.0.1:${await freePort()}`

    const [missing, malformed, shapeless, offline] = await Promise.all([
      clark(["me"]),
      clark(["me", "--url", server.baseUrl], { CLARK_CONFIG: notJson }),
      clark(["search"], { CLARK_CONFIG: wrongShape }),
      clark(["me", "--url", unreachable, "--token", tokens.flag], {})
    ])

    expectFailure(missing, "unauthorized")
    expect(missing.stderr).toContain("--token")

    expectFailure(malformed, "invalid_config")
    expect(malformed.stderr).toContain(`${notJson} is not valid JSON`)
    expectFailure(shapeless, "invalid_config")
    expect(shapeless.stderr).toContain(wrongShape)
    expect(shapeless.stderr).toContain("marketplace.token")

    expectFailure(offline, "unreachable")
    expect(offline.stderr).toContain(`cannot reach the marketplace at ${unreachable}`)
  }, slow)
})

describe("clark market: curation", () => {
  const curator = () => ({ CLARK_MARKETPLACE_URL: server.baseUrl, CLARK_MARKETPLACE_TOKEN: tokens.curator })

  it("curate status and feature change a package's curation status", async () => {
    const listed = await clark(["curate", "status", "hidden-thing", "listed", "--reason", "reviewed"], curator())
    expect(listed).toMatchObject({ code: 0, stderr: "", stdout: "hidden-thing: listed\n" })
    expect((await server.request("/api/v1/packages/hidden-thing")).body.curationStatus).toBe("listed")

    const featured = await clark(["curate", "feature", "beta-tool", "--json"], curator())
    expect(featured.code).toBe(0)
    expect(JSON.parse(featured.stdout)).toEqual({ name: "beta-tool", curationStatus: "featured" })
    const off = await clark(["curate", "feature", "beta-tool", "--off"], curator())
    expect(off).toMatchObject({ code: 0, stdout: "beta-tool: listed\n" })

    const [forbidden, first] = await Promise.all([
      clark(["curate", "status", "alpha-tool", "hidden", "--token", tokens.reader]),
      clark(["curate", "status", "alpha-tool", "listed", "--idempotency-key", "cli-key-1"], curator())
    ])
    expectFailure(forbidden, "forbidden")
    expect(first).toMatchObject({ code: 0, stdout: "alpha-tool: listed\n" })

    const [replayed, reused] = await Promise.all([
      clark(["curate", "status", "alpha-tool", "listed", "--idempotency-key", "cli-key-1"], curator()),
      clark(["curate", "status", "alpha-tool", "hidden", "--idempotency-key", "cli-key-1"], curator())
    ])
    expect(replayed).toMatchObject({ code: 0, stdout: "alpha-tool: listed\n" })
    expectFailure(reused, "idempotency_key_reused")
    expect((await server.request("/api/v1/packages/alpha-tool")).body.curationStatus).toBe("listed")
  }, slow)

  it("collection create, show, update, add, reorder and remove", async () => {
    const created = await clark(
      ["collection", "create", "picks", "--title", "Picks", "--description", "Chosen by hand", "--position", "3"],
      curator()
    )
    expect(created).toMatchObject({ code: 0, stderr: "" })
    expect(created.stdout).toBe("picks: Picks (unpublished, position 3)\nChosen by hand\n\nno items\n")

    const [updated, forbidden] = await Promise.all([
      clark(["collection", "update", "picks", "--title", "Top picks", "--published", "true"], curator()),
      clark(["collection", "show", "picks", "--token", tokens.reader])
    ])
    expect(updated).toMatchObject({ code: 0, stderr: "" })
    expect(updated.stdout.split("\n")[0]).toBe("picks: Top picks (published, position 3)")
    expectFailure(forbidden, "forbidden")

    expect((await clark(["collection", "add", "picks", "@acme/widgets", "--note", "The best"], curator())).code).toBe(0)
    const added = await clark(["collection", "add", "picks", "alpha-tool"], curator())
    expect(added.stdout).toMatch(/\n\n1\. @acme\/widgets {2}The best\n2\. alpha-tool\n$/)

    const wrongSet = await clark(["collection", "reorder", "picks", "alpha-tool", "beta-tool"], curator())
    expectFailure(wrongSet, "validation_failed")

    const reordered = await clark(["collection", "reorder", "picks", "alpha-tool", "@acme/widgets"], curator())
    expect(reordered.stdout).toMatch(/\n\n1\. alpha-tool\n2\. @acme\/widgets {2}The best\n$/)

    const removed = await clark(["collection", "remove", "picks", "alpha-tool", "--json"], curator())
    expect(removed.code).toBe(0)
    const state = (await server.request("/api/v1/curation/collections/picks", bearer(tokens.curator))).body
    expect(JSON.parse(removed.stdout)).toEqual(state)
    expect(state).toEqual({
      slug: "picks",
      title: "Top picks",
      description: "Chosen by hand",
      published: true,
      position: 3,
      items: [{ packageName: "@acme/widgets", position: expect.any(Number), note: "The best" }]
    })

    const [shown, missing] = await Promise.all([
      clark(["collection", "show", "picks"], curator()),
      clark(["collection", "show", "nothing-here"], curator())
    ])
    expect(shown.stdout).toBe("picks: Top picks (published, position 3)\nChosen by hand\n\n1. @acme/widgets  The best\n")
    expectFailure(missing, "not_found")
  }, slow)
})

describe("clark market: every other public read", () => {
  it("health prints the status line, or with --json the body; a degraded marketplace exits 1 with its line", async () => {
    const degraded = await startMarketplace("sqlite", {}, {
      services: (live) => Layer.merge(live, Layer.succeed(DatabaseHealth, { check: Effect.succeed(false) }))
    })
    try {
      const [ok, json, failing] = await Promise.all([
        clark(["health"]),
        clark(["health", "--json"]),
        clark(["health"], { CLARK_MARKETPLACE_URL: degraded.baseUrl })
      ])
      expect(ok).toMatchObject({ code: 0, stderr: "" })
      expect(ok.stdout).toMatch(/^ok: database ok, environment development, checked \d{4}-\d{2}-\d{2}T[\d:.]+Z\n$/)
      expect(json).toMatchObject({ code: 0, stderr: "" })
      expect(JSON.parse(json.stdout)).toEqual({ status: "ok", environment: "development", checkedAt: expect.any(String), checks: { database: "ok" } })
      expectFailure(failing, "degraded")
      expect(failing.stderr).toMatch(/^degraded: database error, environment development, checked /)
    } finally {
      await degraded.close()
    }
  }, slow)

  it("versions lists a package's versions newest first; an unknown package is not_found", async () => {
    const [table, json, missing] = await Promise.all([
      clark(["versions", "@acme/widgets"]),
      clark(["versions", "@acme/widgets", "--json"]),
      clark(["versions", "no-such-package"])
    ])
    expect(table).toMatchObject({ code: 0, stderr: "" })
    const lines = table.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^VERSION\s+PUBLISHED\s+VERIFIED\s+PROVENANCE$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(["1.1.0", "1.0.0"])
    expect(lines[1]).toMatch(/^1\.1\.0\s+2024-01-20T00:00:00\.000Z\s+(yes|no)\s+(yes|no)$/)
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/packages/%40acme%2Fwidgets/versions")).body)
    expectFailure(missing, "not_found")
  }, slow)

  it("categories lists them with their public package counts, or shows one", async () => {
    const [list, json, one, missing] = await Promise.all([
      clark(["categories"]),
      clark(["categories", "--json"]),
      clark(["categories", "tools"]),
      clark(["categories", "nothing-here"])
    ])
    expect(list).toMatchObject({ code: 0, stderr: "" })
    expect(list.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^SLUG\s+NAME\s+PACKAGES\s+DESCRIPTION$/),
      expect.stringMatching(/^(tools\s+Tools\s+1\s+Things that help|empty\s+Empty\s+0)$/),
      expect.stringMatching(/^(tools\s+Tools\s+1\s+Things that help|empty\s+Empty\s+0)$/)
    ])
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/categories")).body)
    expect(one).toMatchObject({ code: 0, stderr: "", stdout: "tools: Tools (1 package)\nThings that help\n" })
    expectFailure(missing, "not_found")
  }, slow)

  it("collections lists the published ones, or shows one with its packages in order; unpublished ones are not_found", async () => {
    const [list, json, one, unpublished] = await Promise.all([
      clark(["collections"]),
      clark(["collections", "--json"]),
      clark(["collections", "starter"]),
      clark(["collections", "secret"])
    ])
    expect(list).toMatchObject({ code: 0, stderr: "" })
    const rows = list.stdout.trimEnd().split("\n")
    expect(rows[0]).toMatch(/^SLUG\s+TITLE\s+DESCRIPTION$/)
    expect(rows).toContainEqual(expect.stringMatching(/^starter\s+Starter kit\s+Where to begin$/))
    expect(list.stdout).not.toContain("secret")
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/collections")).body)
    expect(one).toMatchObject({ code: 0, stderr: "" })
    const shown = one.stdout.split("\n")
    expect(shown.slice(0, 3)).toEqual(["starter: Starter kit", "Where to begin", ""])
    expect(shown.slice(4, 6).map((line) => line.split(/\s+/)[0])).toEqual(["beta-tool", "@acme/widgets"])
    expectFailure(unpublished, "not_found")
  }, slow)

  it("page prints the Markdown rendering, --json the published page; a nested slug works, a draft is not_found", async () => {
    const [markdown, json, draft, invalid] = await Promise.all([
      clark(["page", "docs/intro"]),
      clark(["page", "docs/intro", "--json"]),
      clark(["page", "draft"]),
      clark(["page", "Not/A/Slug"])
    ])
    expect(markdown).toMatchObject({ code: 0, stderr: "" })
    const rendered = (await server.request("/api/v1/pages/docs%2Fintro?format=md")).text
    expect(markdown.stdout).toBe(`${rendered.trimEnd()}\n`)
    expect(markdown.stdout).toContain("# Getting started")
    expect(json).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/pages/docs%2Fintro")).body)
    expect(JSON.parse(json.stdout).page).toMatchObject({ slug: "docs/intro", kind: "docs", title: "Introduction" })
    expectFailure(draft, "not_found")
    expectFailure(invalid, "validation_failed")
  }, slow)
})

describe("clark market: the account", () => {
  it("me packages lists the listings the caller's publishers own", async () => {
    const [owned, json, none] = await Promise.all([
      clark(["me", "packages", "--token", tokens.owner]),
      clark(["me", "packages", "--json", "--token", tokens.owner]),
      clark(["me", "packages", "--token", tokens.reader])
    ])
    expect(owned).toMatchObject({ code: 0, stderr: "" })
    expect(owned.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^NAME\s+VERSION\s+STATUS\s+PUBLISHER$/),
      expect.stringMatching(/^@acme\/widgets\s+1\.1\.0\s+featured\s+acme \(verified\)$/)
    ])
    expect(JSON.parse(json.stdout)).toEqual((await server.request("/api/v1/me/packages", bearer(tokens.owner))).body)
    expect(none).toMatchObject({ code: 0, stderr: "", stdout: "no listings owned by your publishers\n" })
  }, slow)

  it("me delete refuses without a terminal unless --yes, needs a session, and with --yes deletes the account", async () => {
    const [unconfirmed, withApiToken] = await Promise.all([
      clark(["me", "delete", "--token", sessions.leaver]),
      clark(["me", "delete", "--yes", "--token", tokens.owner])
    ])
    // The test's stdin is not a terminal: nothing could confirm, so nothing is sent.
    expectFailure(unconfirmed, "confirmation_required")
    expect(unconfirmed.stderr).toContain("--yes")
    expect((await server.request("/api/v1/me", bearer(sessions.leaver))).status).toBe(200)
    expectFailure(withApiToken, "forbidden")
    expect((await server.request("/api/v1/me", bearer(tokens.owner))).status).toBe(200)

    const [deleted, deletedJson] = await Promise.all([
      clark(["me", "delete", "--yes", "--token", sessions.leaver]),
      clark(["me", "delete", "--yes", "--json", "--token", sessions.jsonLeaver])
    ])
    expect(deleted).toMatchObject({ code: 0, stderr: "" })
    expect(deleted.stdout).toBe("account deleted; removed 0 API tokens, 0 device links, 0 OAuth grants, 0 publishers, 0 media\n")
    expect(deletedJson).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(deletedJson.stdout)).toEqual({
      deleted: true,
      removed: { apiTokens: 0, deviceLinks: 0, oauthGrants: 0, publishers: 0, media: 0 }
    })
    expect((await server.request("/api/v1/me", bearer(sessions.leaver))).status).toBe(401)
    expect((await server.request("/api/v1/me", bearer(sessions.jsonLeaver))).status).toBe(401)
    expectFailure(await clark(["me", "--token", sessions.leaver]), "unauthorized")
  }, slow)
})

/**
 * `clark market ARGS` on a terminal (a pseudo-terminal made by `script`), answering `answer` once the
 * confirmation is asked. stdout and stderr both arrive on the terminal.
 */
const onTerminal = (args: ReadonlyArray<string>, answer: string) =>
  new Promise<Outcome>((resolve, reject) => {
    const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`
    const command = [process.execPath, ...clarkArgs(["market", ...args])].map(quote).join(" ")
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: root,
      env: cleanEnv({ CLARK_MARKETPLACE_URL: server.baseUrl })
    })
    let output = ""
    let answered = false
    const timer = setTimeout(() => child.kill("SIGKILL"), commandTimeout)
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (!answered && output.includes("cannot be undone")) {
        answered = true
        child.stdin.write(answer)
      }
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      const outcome = { code, signal, stdout: output, stderr: "", output }
      outputs.push(outcome)
      resolve(outcome)
    })
  })

describe("clark market: me delete on a terminal", () => {
  it("names the account and asks; no keeps it (exit 1), yes deletes it", async () => {
    const [kept, deleted] = await Promise.all([
      onTerminal(["me", "delete", "--token", sessions.ttyKeeper], "n"),
      onTerminal(["me", "delete", "--token", sessions.ttyLeaver], "y")
    ])
    expect(kept.output).toContain("Delete the account ttyKeeper <tty-keeper@example.com> and everything tied to it?")
    expect(kept.code).toBe(1)
    expect(kept.output).toContain("cancelled: nothing was deleted")
    expect((await server.request("/api/v1/me", bearer(sessions.ttyKeeper))).status).toBe(200)

    expect(deleted.output).toContain("Delete the account ttyLeaver <tty-leaver@example.com>")
    expect(deleted.code).toBe(0)
    expect(deleted.output).toContain("account deleted; removed 0 API tokens")
    expect((await server.request("/api/v1/me", bearer(sessions.ttyLeaver))).status).toBe(401)
  }, slow)
})

describe("clark market: secrets", () => {
  it("never prints a token, in any output of any command above", () => {
    expect(outputs.length).toBeGreaterThan(30)
    for (const secret of Object.values(tokens)) expect(secret).toMatch(/^cmk_/)
    const secrets = [...Object.values(tokens), ...Object.values(sessions)]
    for (const secret of Object.values(sessions)) expect(secret.length).toBeGreaterThan(24)
    for (const { stderr, stdout } of outputs) {
      for (const secret of secrets) {
        expect(stdout).not.toContain(secret)
        expect(stderr).not.toContain(secret)
        // Not even the random part alone.
        expect(`${stdout}${stderr}`).not.toContain(secret.slice(4, 24))
      }
    }
  })
})
