/**
 * The real `clark marketplace serve`, spawned from the compiled CLI: a taken
 * port on first run, its base URL and public origin, and serving a
 * demo-seeded SQLite catalogue until killed.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import { clarkArgs, root } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"
import {
  baseEnv,
  clark,
  commandTimeout,
  countRows,
  databaseLine,
  slow,
  sqliteUrl,
  useTempDir
} from "./MarketplaceFixture.js"

useTempDir()

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
