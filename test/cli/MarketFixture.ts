/**
 * What the `clark market` suites share: a marketplace server started in this
 * process on SQLite with a small catalogue and accounts, and each command run
 * as its own process (the compiled `node bin/clark.js market …`) with a clean
 * environment whose HOME and XDG_CONFIG_HOME point into a temporary directory.
 * Each suite file gets its own server and state (vitest runs files apart).
 */
import { afterAll, beforeAll, expect } from "@effect/vitest"
import { type Context, Effect, Redacted } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Scope } from "../../schema/marketplace/Account.js"
import { Credentials } from "../../services/marketplace/Credentials.js"
import { type RunningMarketplace, startMarketplace } from "../support/MarketplaceServer.js"
import { clarkArgs, type Outcome, root, runClark } from "../support/Cli.js"

export const commandTimeout = 60_000
export const slow = 120_000

export let tmp: string
let home: string
let xdg: string
export let server: RunningMarketplace

/** Every output of every command, to prove at the end that no token was ever printed. */
export const outputs: Array<Outcome> = []

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

export const run = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) => {
  const outcome = await runClark(["market", ...args], { env: cleanEnv(env), timeout: commandTimeout })
  outputs.push(outcome)
  return outcome
}

/** A command against the test server, configured by the environment unless the test says otherwise. */
export const clark = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = { CLARK_MARKETPLACE_URL: server.baseUrl }) =>
  run(args, env)

export const expectFailure = (outcome: Outcome, code: string) => {
  expect(outcome.code).toBe(1)
  expect(outcome.stdout).toBe("")
  expect(outcome.stderr).toMatch(new RegExp(`^${code}: \\S`))
  expect(outcome.stderr.trim().split("\n")).toHaveLength(1)
}

export const writeFile = (name: string, content: string) => {
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

export const document = {
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
export const tokens = { flag: "", env: "", file: "", home: "", curator: "", reader: "", owner: "" }

/** Session tokens (DELETE /me needs a signed-in session), by who holds them. */
export const sessions = { owner: "", leaver: "", jsonLeaver: "", ttyKeeper: "", ttyLeaver: "" }

const issue = (credentials: Context.Tag.Service<Credentials>, email: string, scopes: ReadonlyArray<Scope>, role: "admin" | "user") =>
  Effect.gen(function*() {
    yield* credentials.createUser({ email, name: email.split("@")[0]!, role })
    return Redacted.value(yield* credentials.issueApiToken({ email, scopes }))
  })

export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

/** Starts the server and issues the credentials before the suite, and cleans up after it. */
export const useMarketplace = () => {
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
}

/**
 * `clark market ARGS` on a terminal (a pseudo-terminal made by `script`), answering `answer` once the
 * confirmation is asked. stdout and stderr both arrive on the terminal.
 */
export const onTerminal = (args: ReadonlyArray<string>, answer: string) =>
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

/** No output of any command of the suite shows a token or session token, whole or in part. */
export const expectNoSecrets = (minimumOutputs: number) => {
  expect(outputs.length).toBeGreaterThan(minimumOutputs)
  for (const secret of Object.values(tokens)) expect(secret).toMatch(/^cmk_/)
  for (const secret of Object.values(sessions)) expect(secret.length).toBeGreaterThan(24)
  const secrets = [...Object.values(tokens), ...Object.values(sessions)]
  for (const { stderr, stdout } of outputs) {
    for (const secret of secrets) {
      expect(stdout).not.toContain(secret)
      expect(stderr).not.toContain(secret)
      // Not even the random part alone.
      expect(`${stdout}${stderr}`).not.toContain(secret.slice(4, 24))
    }
  }
}
