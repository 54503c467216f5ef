/**
 * `clark node packages …` and `clark node install` end to end: a real `clark node serve` on a temporary data
 * dir, each command its own process, and the person's decision sent the way the app sends it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { clarkArgs, root, runClark } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../examples/packages")
const appSecret = "node-packages-cli-secret"
const commandTimeout = 60_000

const baseEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const { CLARK_NODE_URL: _u, CC_DATA_DIR: _d, CC_APP_SECRET: _s, CC_MARKETPLACE_URL: _m, ...rest } = process.env
  return { ...rest, ...extra }
}

let tmp: string
let dataDir: string
let baseUrl: string
let server: ChildProcess | undefined
let serverOutput = ""

const clark = (args: ReadonlyArray<string>) =>
  runClark(["node", ...args], { env: baseEnv({ CLARK_NODE_URL: baseUrl, CC_DATA_DIR: dataDir }), timeout: commandTimeout })

/** The person, as the app calls the node: the local token with the app secret. */
const asPerson = async (method: string, route: string, body?: unknown) => {
  const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json() as any }
}

const copyOf = (name: string) => {
  const target = path.join(tmp, `${name}-${Math.random().toString(36).slice(2)}`)
  fs.cpSync(path.join(examples, name), target, { recursive: true })
  return target
}

/** Waits (bounded, across processes) until the node holds a waiting approval of the package. */
const waitingApproval = async (packageId: string) => {
  for (let attempt = 0; attempt < 300; attempt++) {
    const events = await asPerson("GET", "/packages/approval-events")
    const asked = events.body.events.filter((e: any) => e.packageId === packageId && e.outcome === "asked").at(-1)
    if (asked !== undefined) {
      const approval = await asPerson("GET", `/packages/approvals/${asked.approvalId}`)
      if (approval.body.status === "waiting") return approval.body
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no waiting approval of ${packageId}`)
}

/** `clark node install` as its own process, its stderr read as it arrives. */
const waitingInstall = (coordinate: string) => {
  const child = spawn(process.execPath, clarkArgs(["node", "install", coordinate]), {
    cwd: root,
    env: baseEnv({ CLARK_NODE_URL: baseUrl, CC_DATA_DIR: dataDir }),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: commandTimeout
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += String(chunk)))
  const seen = new Set<() => void>()
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk)
    for (const check of seen) check()
  })
  return {
    asked: (approvalId: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (stderr.includes(`approval ${approvalId}`)) resolve()
          else if (child.exitCode !== null) reject(new Error(`install exited: ${stderr}`))
        }
        seen.add(check)
        child.once("exit", check)
        check()
      }),
    done: new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.once("close", (code) => resolve({ code, stdout, stderr })))
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-node-packages-"))
  dataDir = path.join(tmp, "data")
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  server = spawn(process.execPath, clarkArgs(["node", "serve", "--data-dir", dataDir, "--port", String(port)]), {
    cwd: root,
    env: baseEnv({ CC_APP_SECRET: appSecret }),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 10 * 60_000
  })
  server.stdout!.on("data", (chunk) => (serverOutput += String(chunk)))
  server.stderr!.on("data", (chunk) => (serverOutput += String(chunk)))
  for (let attempt = 0; ; attempt++) {
    const status = await fetch(`${baseUrl}/health`).then((r) => r.status, () => 0)
    if (status === 200) break
    if (attempt > 300 || server.exitCode !== null) throw new Error(`the node never answered:\n${serverOutput}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}, 120_000)

afterAll(async () => {
  server?.kill("SIGTERM")
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
})

describe("clark node packages", () => {
  it("add-local lists a folder; list and show describe it", async () => {
    const folder = copyOf("tide-widget")
    const added = await clark(["packages", "add-local", folder])
    expect(added.stderr).toBe("")
    expect(added.code).toBe(0)
    expect(added.stdout).toMatch(/^listed @clark-examples\/tide-widget 1\.0\.0 \(sha256:[0-9a-f]{64}\)\n$/)

    const listed = await clark(["packages", "list"])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(/PACKAGE\s+VERSION\s+SOURCE\s+INSTALLED/)
    expect(listed.stdout).toMatch(/@clark-examples\/tide-widget\s+1\.0\.0\s+local\s+no/)
    expect(listed.stdout).toContain("marketplace: none set")

    const shown = await clark(["packages", "show", "@clark-examples/tide-widget"])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`source:      local (${folder})`)
    expect(shown.stdout).toContain("  network tides.example.org")
    expect(shown.stdout).toContain("  widget (isolated-ui) widget/index.html widget tide-table")

    const missing = await clark(["packages", "add-local", path.join(tmp, "nothing-here")])
    expect(missing.code).not.toBe(0)
  }, 120_000)
})

describe("clark node install", () => {
  it("asks, waits for the person's grant, and reports the install", async () => {
    await clark(["packages", "add-local", copyOf("harbour-theme")])
    const running = runClark(["node", "install", "@clark-examples/harbour-theme@1.0.0"], {
      env: baseEnv({ CLARK_NODE_URL: baseUrl, CC_DATA_DIR: dataDir }),
      timeout: commandTimeout
    })
    const approval = await waitingApproval("@clark-examples/harbour-theme")
    expect(approval).toMatchObject({ askedBy: "cli-api", riskTier: "declarative" })
    const decided = await asPerson("POST", `/packages/approvals/${approval.approvalId}/decision`, {
      decision: "granted",
      digest: approval.operationDigest
    })
    expect(decided.status).toBe(200)
    const outcome = await running
    expect(outcome.code).toBe(0)
    expect(outcome.stdout).toBe("installed @clark-examples/harbour-theme 1.0.0\n")
    expect(outcome.stderr).toContain(`approval ${approval.approvalId}`)
  }, 120_000)

  it("exits 1 when the person denies it; --no-wait prints the approval and returns", async () => {
    await clark(["packages", "add-local", copyOf("tide-widget")])
    const asked = await clark(["install", "@clark-examples/tide-widget", "--no-wait"])
    expect(asked.code).toBe(0)
    expect(asked.stdout).toMatch(/^apr_[0-9a-f]+\n$/)
    const running = waitingInstall("@clark-examples/tide-widget")
    // Asking again for the same bytes reuses the waiting approval: the command says it waits for that one.
    await running.asked(asked.stdout.trim())
    const approval = await waitingApproval("@clark-examples/tide-widget")
    expect(approval.approvalId).toBe(asked.stdout.trim())
    const denied = await asPerson("POST", `/packages/approvals/${approval.approvalId}/decision`, {
      decision: "denied",
      digest: approval.operationDigest
    })
    expect(denied).toMatchObject({ status: 200, body: { decision: "denied" } })
    const outcome = await running.done
    expect(outcome.stdout, outcome.stderr).toBe("")
    expect(outcome.code, outcome.stderr).toBe(1)
    expect(outcome.code).toBe(1)
    expect(outcome.stderr).toContain("DENIED: the person denied the install")
  }, 120_000)

  it("a package the directory does not list is RESOURCE_NOT_FOUND", async () => {
    const outcome = await clark(["install", "@clark-examples/nothing"])
    expect(outcome.code).toBe(1)
    expect(outcome.stderr).toMatch(/^RESOURCE_NOT_FOUND: /)
  }, 60_000)
})
