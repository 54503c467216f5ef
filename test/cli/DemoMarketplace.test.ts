/**
 * The README's "Installing the example packages from the demo marketplace", command for command, each its own
 * process of the compiled `clark`: the demo registry (scripts/demo/registry.ts) serves the three example packages,
 * `clark marketplace serve --seed-demo-if-empty` indexes them as they are submitted with `clark market submit`,
 * `clark market install` shows their coordinate, and a `clark node serve` pointed at both installs each through
 * `clark node install` once the person grants it (the tarball's integrity checked against the listing).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type DemoRegistry, startDemoRegistry } from "../../scripts/demo/registry.js"
import { clarkArgs, root, runClark } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"

const commandTimeout = 90_000
const appSecret = "demo-marketplace-secret"
const examples = ["harbour-theme", "notes-service", "tide-widget"].map((name) => `@clark-examples/${name}`)

/** Every command's environment: nothing of the machine's own marketplace, node or registry settings. */
const baseEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const key of Object.keys(env)) if (/^(MARKETPLACE_|CC_|CLARK_|LOG_)/.test(key)) delete env[key]
  return { ...env, HOME: tmp, ...extra }
}

let tmp: string
let registry: DemoRegistry
const children: Array<ChildProcess> = []
let marketUrl: string
let nodeUrl: string
let dataDir: string
let token: string

/** Starts a long-running `clark` command and waits until `health` answers 200. */
const serve = async (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>, health: string) => {
  let output = ""
  const child = spawn(process.execPath, clarkArgs(args), { cwd: root, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] })
  child.stdout!.on("data", (chunk) => (output += String(chunk)))
  child.stderr!.on("data", (chunk) => (output += String(chunk)))
  children.push(child)
  for (let attempt = 0; ; attempt++) {
    const status = await fetch(health, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)
    if (status === 200) return
    if (attempt > 300 || child.exitCode !== null) throw new Error(`${args.join(" ")} never answered:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const clark = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  runClark(args, { env: baseEnv(env), timeout: commandTimeout })

const market = (args: ReadonlyArray<string>) =>
  clark(["market", ...args], { CLARK_MARKETPLACE_URL: marketUrl, CLARK_MARKETPLACE_TOKEN: token })

const node = (args: ReadonlyArray<string>) => clark(["node", ...args, "--data-dir", dataDir], { CLARK_NODE_URL: nodeUrl })

/** The person, as the app calls the node: the local token with the app secret. */
const asPerson = async (method: string, route: string, body?: unknown) => {
  const local = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
  const response = await fetch(`${nodeUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${local}`, "x-app-secret": appSecret, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json() as any }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-demo-market-"))
  registry = await startDemoRegistry({ port: 0 })
  const database = `sqlite:${path.join(tmp, "marketplace.db")}`
  const marketPort = await freePort()
  marketUrl = `http://127.0.0.1:${marketPort}`
  await serve(
    ["marketplace", "serve", "--seed-demo-if-empty", "--database", database, "--port", String(marketPort)],
    { MARKETPLACE_REGISTRY_URL: registry.url },
    `${marketUrl}/api/v1/health`
  )
  expect((await clark(["marketplace", "admin", "user", "create", "--email", "demo@example.com", "--database", database])).code).toBe(0)
  const created = await clark(["marketplace", "admin", "token", "create", "--email", "demo@example.com", "--scopes", "packages:submit", "--database", database])
  expect(created.code, created.stderr).toBe(0)
  token = created.stdout.trim()
  dataDir = path.join(tmp, "node")
  const nodePort = await freePort()
  nodeUrl = `http://127.0.0.1:${nodePort}`
  await serve(
    ["node", "serve", "--data-dir", dataDir, "--port", String(nodePort)],
    { CC_APP_SECRET: appSecret, CC_MARKETPLACE_URL: marketUrl, CC_REGISTRY_URL: registry.url },
    `${nodeUrl}/health`
  )
}, 180_000)

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM")
  await registry?.close()
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
})

describe("the example packages from the demo marketplace", () => {
  it("are submitted, indexed with their registry integrity, and installed by the node once the person grants it", async () => {
    expect(registry.packages.map((p) => p.name)).toEqual(examples)
    for (const served of registry.packages) {
      const submitted = await market(["submit", served.name])
      expect(submitted.code, submitted.output).toBe(0)
      expect(submitted.stdout.trim()).toBe(`${served.name}@1.0.0: indexed`)
      const coordinate = await market(["install", served.name, "--json"])
      expect(coordinate.code, coordinate.output).toBe(0)
      expect(JSON.parse(coordinate.stdout)).toMatchObject({
        version: "1.0.0",
        integrity: served.integrity,
        cliCommand: `clark node install ${served.name}@1.0.0`
      })
    }

    for (const served of registry.packages) {
      const shown = await node(["packages", "show", served.name])
      expect(shown.code, shown.output).toBe(0)
      expect(shown.stdout).toContain("marketplace")
      // `clark node install` asks and waits; the person grants it on their surface.
      const running = node(["install", `${served.name}@1.0.0`])
      let approval: any
      for (let attempt = 0; approval === undefined && attempt < 300; attempt++) {
        const events = await asPerson("GET", "/packages/approval-events")
        const asked = events.body.events.find((e: any) => e.packageId === served.name && e.outcome === "asked")
        if (asked !== undefined) approval = (await asPerson("GET", `/packages/approvals/${asked.approvalId}`)).body
        else await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(approval).toMatchObject({ packageId: served.name, version: "1.0.0", source: "marketplace", status: "waiting" })
      const decided = await asPerson("POST", `/packages/approvals/${approval.approvalId}/decision`, {
        decision: "granted",
        digest: approval.operationDigest
      })
      expect(decided.status, JSON.stringify(decided.body)).toBe(200)
      const outcome = await running
      expect(outcome.code, outcome.output).toBe(0)
      expect(outcome.stdout).toBe(`installed ${served.name} 1.0.0\n`)
      const listing = await asPerson("GET", `/packages/listing/${encodeURIComponent(served.name)}`)
      expect(listing.body).toMatchObject({ source: "marketplace", digest: served.integrity, installed: { version: "1.0.0", current: true } })
    }
  }, 300_000)
})
