/**
 * The real `clark node` client commands, end to end: a node started with
 * `clark node serve` on a temporary data dir and a scripted model, then each
 * command run as its own process (the compiled `node bin/clark.js node …`),
 * checking exit codes and what it prints.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clarkArgs, type Outcome, root, runClark } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"


/** Every child process is killed after this long. */
const commandTimeout = 60_000
const slow = 120_000

/** How long the scripted turn named "long" keeps writing, so it can be stopped midway. */
const longDelay = 20_000

/** The node's budget of the waiting route (CC_WAIT_ROUTE_MS): a "long" turn outlives it and answers 202. */
const waitRouteMs = 3_000

const appSecret = "node-cli-test-secret"

/** The environment of every command: no node URL or data dir inherited from the caller. */
const baseEnv = (extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const { CLARK_NODE_URL: _u, CC_DATA_DIR: _d, CC_APP_SECRET: _s, LOG_FORMAT: _f, LOG_LEVEL: _l, NO_COLOR: _n, ...rest } =
    process.env
  return { ...rest, ...extra }
}

let tmp: string
let dataDir: string
let baseUrl: string
let server: ChildProcess | undefined
let serverOutput = ""

/** The node the commands talk to, given the usual way: CLARK_NODE_URL and CC_DATA_DIR. */
const nodeEnv = () => ({ CLARK_NODE_URL: baseUrl, CC_DATA_DIR: dataDir })

const clark = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = nodeEnv()) =>
  runClark(["node", ...args], { env: baseEnv(env), timeout: commandTimeout })

interface Chunk {
  readonly at: number
  readonly text: string
}

/** A command whose stdout is read chunk by chunk as it arrives. */
const clarkIncremental = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, clarkArgs(["node", ...args]), {
    cwd: root,
    env: baseEnv(nodeEnv()),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: commandTimeout
  })
  const chunks: Array<Chunk> = []
  let stderr = ""
  const listeners = new Set<() => void>()
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (text: string) => {
    chunks.push({ at: Date.now(), text })
    for (const listener of listeners) listener()
  })
  child.stderr.on("data", (chunk) => (stderr += String(chunk)))
  const stdout = () => chunks.map((c) => c.text).join("")
  return {
    chunks,
    stdout,
    /** Resolves once stdout holds `text`; fails after `ms`. */
    waitFor: (text: string, ms = commandTimeout) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!stdout().includes(text)) return
          listeners.delete(check)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          listeners.delete(check)
          reject(new Error(`no ${JSON.stringify(text)} within ${ms} ms; stdout: ${stdout()}; stderr: ${stderr}`))
        }, ms)
        listeners.add(check)
        check()
      }),
    done: new Promise<Outcome>((resolve) => {
      child.once("close", (code, signal) => resolve({ code, signal, stdout: stdout(), stderr, output: `${stdout()}\n${stderr}` }))
    })
  }
}

/** Resolves when the child has exited; kills it if it has not after `ms`. */
const exited = (child: ChildProcess, ms: number) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
  })

/** Polls GET /health until it answers 200, with a bounded number of attempts. */
const waitForHealth = async (child: ChildProcess) => {
  const attempts = 300
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${serverOutput}`)
    const status = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => undefined)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`no 200 from ${baseUrl}/health after ${attempts} attempts:\n${serverOutput}`)
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-node-cli-"))
  dataDir = path.join(tmp, "data")
  const script = path.join(tmp, "script.json")
  fs.writeFileSync(script, JSON.stringify({
    rules: [
      { match: "slow", steps: [{ delta: "one " }, { delay: 400 }, { delta: "two" }] },
      { match: "long", steps: [{ delta: "begun " }, { delay: longDelay }, { delta: "never" }] },
      { match: "think", steps: [{ reasoning: "pondering" }, { delta: "answer" }] },
      { match: "fail", steps: [{ delta: "half " }, { error: "the script broke" }] }
    ]
  }))
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  const child = spawn(
    process.execPath,
    clarkArgs(["node", "serve", "--data-dir", dataDir, "--port", String(port), "--model", `scripted:${script}`]),
    {
      cwd: root,
      env: baseEnv({ CC_APP_SECRET: appSecret, CC_WAIT_ROUTE_MS: String(waitRouteMs) }),
      stdio: ["ignore", "pipe", "pipe"],
      // The whole file's bound: the server never outlives it.
      timeout: 15 * 60_000
    }
  )
  server = child
  child.stdout.on("data", (chunk) => (serverOutput += String(chunk)))
  child.stderr.on("data", (chunk) => (serverOutput += String(chunk)))
  await waitForHealth(child)
}, slow)

afterAll(async () => {
  if (server !== undefined) {
    server.kill("SIGTERM")
    await exited(server, 10_000)
  }
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
}, slow)

/** A new conversation, made through the command. */
const createConversation = async (title?: string) => {
  const result = await clark(title === undefined ? ["conversations", "create"] : ["conversations", "create", "--title", title])
  expect(result.stderr).toBe("")
  expect(result.code).toBe(0)
  const id = result.stdout.trim()
  expect(id).toMatch(/^\S+$/)
  return id
}

/** No stack trace, no logger frame: only `code: message` lines. */
const expectPlainError = (outcome: Outcome, code: string) => {
  expect(outcome.code).not.toBe(0)
  expect(outcome.code).not.toBeNull()
  expect(outcome.stderr).toMatch(new RegExp(`^${code}: .+\\n$`))
  expect(outcome.stderr).not.toMatch(/\n\s+at /)
}

describe("clark node conversations", () => {
  it("create prints the id, list shows it in a table, --json gives the raw results", async () => {
    const id = await createConversation("Weekly plan")

    const listed = await clark(["conversations", "list"])
    expect(listed).toMatchObject({ code: 0, stderr: "" })
    const lines = listed.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^ID\s+TITLE\s+RUNNING\s+UPDATED$/)
    const row = lines.find((line) => line.startsWith(id))
    expect(row).toMatch(new RegExp(`^${id}\\s+Weekly plan\\s+no\\s+\\d{4}-\\d\\d-\\d\\dT`))

    const [createdJson, listJson] = await Promise.all([
      clark(["conversations", "create", "--json"]),
      clark(["conversations", "list", "--json"])
    ])
    expect(createdJson.code).toBe(0)
    expect(JSON.parse(createdJson.stdout)).toMatchObject({ conversationId: expect.any(String), homeNodeId: expect.any(String) })
    expect(listJson.code).toBe(0)
    const body = JSON.parse(listJson.stdout) as { conversations: Array<{ conversationId: string; title: string | null; running: boolean }> }
    expect(body.conversations).toContainEqual(expect.objectContaining({ conversationId: id, title: "Weekly plan", running: false }))
  }, slow)

  it("takes --url and --data-dir in place of the environment", async () => {
    const result = await clark(["conversations", "list", "--url", baseUrl, "--data-dir", dataDir], {})
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(result.stdout).toMatch(/^ID\s+TITLE/)
  }, slow)
})

describe("clark node send", () => {
  it("prints the reply, and the raw result with --json", async () => {
    const id = await createConversation()
    const result = await clark(["send", id, "hello"])
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(result.stdout).toBe("You said: hello\n")

    const json = await clark(["send", "--json", id, "hello again"])
    expect(json.code).toBe(0)
    const body = JSON.parse(json.stdout) as { resolution: string; timeline: { entries: Array<{ role: string }> } }
    expect(body.resolution).toBe("answered")
    expect(body.timeline.entries.map((e) => e.role)).toContain("assistant")
  }, slow)

  it("--stream prints the deltas as they arrive", async () => {
    const id = await createConversation()
    const child = clarkIncremental(["send", "--stream", id, "slow please"])
    const outcome = await child.done
    expect(outcome).toMatchObject({ code: 0, stderr: "" })
    expect(outcome.stdout).toBe("one two\n")
    // "one " was written (and read here) before "two" existed: at least two chunks.
    const first = child.chunks.findIndex((c) => c.text.includes("one "))
    const second = child.chunks.findIndex((c) => c.text.includes("two"))
    expect(first).toBeGreaterThanOrEqual(0)
    expect(second).toBeGreaterThan(first)
    expect(child.chunks[first]!.text).not.toContain("two")
    expect(child.chunks.length).toBeGreaterThanOrEqual(2)
  }, slow)

  it("--stream prints reasoning once prefixed, apart from the reply", async () => {
    const id = await createConversation()
    const result = await clark(["send", "--stream", id, "think about it"])
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(result.stdout).toBe("thinking: pondering\nanswer\n")
  }, slow)

  it("--stream --json prints the raw result of the done event", async () => {
    const id = await createConversation()
    const result = await clark(["send", "--stream", "--json", id, "hi"])
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(JSON.parse(result.stdout)).toMatchObject({ resolution: "answered", taskId: expect.any(String) })
  }, slow)

  it("an unknown conversation is RESOURCE_NOT_FOUND, without a stack trace", async () => {
    const [waiting, streaming] = await Promise.all([
      clark(["send", "conv_absent", "hello"]),
      clark(["send", "--stream", "conv_absent", "hello"])
    ])
    expectPlainError(waiting, "RESOURCE_NOT_FOUND")
    expectPlainError(streaming, "RESOURCE_NOT_FOUND")
    expect(waiting.stdout).toBe("")
    expect(streaming.stdout).toBe("")
  }, slow)
})

/** The node's local token, from its data dir. */
const localToken = () => (JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")) as { localToken: string }).localToken

/** Polls the conversation's timeline (as the command-line api) until `found` holds; bounded, across processes. */
const timelineUntil = async (id: string, found: (body: string) => boolean) => {
  for (let attempt = 0; attempt < 200; attempt++) {
    const response = await fetch(`${baseUrl}/conversations/${id}/timeline`, { headers: { authorization: `Bearer ${localToken()}` } })
    const body = await response.text()
    if (found(body)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the timeline of ${id} never matched`)
}

describe("clark node send: the exit code says whether the message got its reply", () => {
  it("a failed reply exits 1 with the model's error and TURN_FAILED on stderr, waiting or streamed", async () => {
    const id = await createConversation()
    const [waiting, streaming] = [await clark(["send", id, "fail now"]), await clark(["send", "--stream", id, "fail again"])]
    for (const outcome of [waiting, streaming]) {
      expect(outcome.code).toBe(1)
      expect(outcome.stdout).toBe("half \n")
      expect(outcome.stderr).toMatch(/^\S+: .*the script broke.*\nTURN_FAILED: the reply failed\n$/)
    }
    const json = await clark(["send", "--json", id, "fail with json"])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ resolution: "failed" })
    expect(json.stderr).toMatch(/TURN_FAILED: the reply failed\n$/)
  }, slow)

  it("a message cancelled while it waited exits 1 with TURN_CANCELLED", async () => {
    const id = await createConversation()
    // The person's turn is running; a message of the command-line api waits behind it (message rule 5).
    const person = new AbortController()
    const personTurn = await fetch(`${baseUrl}/conversations/${id}/messages/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${localToken()}`, "x-app-secret": appSecret, "content-type": "application/json" },
      body: JSON.stringify({ text: "long walk" }),
      signal: person.signal
    })
    expect(personTurn.status).toBe(200)
    await timelineUntil(id, (body) => body.includes("begun "))
    // Streamed, so the answer is the turn's end, whatever the waiting route's budget.
    const waiting = clarkIncremental(["send", "--stream", id, "queued behind"])
    await timelineUntil(id, (body) => body.includes("queued behind"))

    expect(await clark(["stop", id])).toMatchObject({ code: 0, stdout: "stopped\n" })
    expect(await waiting.done).toMatchObject({
      code: 1,
      stdout: "",
      stderr: "TURN_CANCELLED: the message was cancelled before its reply started\n"
    })
    person.abort()
  }, slow)

  it("a reply that outlives the waiting route (202 background) exits 0 and says so", async () => {
    const id = await createConversation()
    const started = Date.now()
    const result = await clark(["send", id, "long errand"])
    expect(Date.now() - started).toBeGreaterThanOrEqual(waitRouteMs)
    expect(result).toMatchObject({ code: 0, stderr: "" })
    expect(result.stdout).toMatch(/resolution: background\n$/)
    expect((await clark(["stop", id])).code).toBe(0)
  }, slow)
})

describe("clark node stop", () => {
  it("stops the reply a conversation is writing, then finds nothing running", async () => {
    const id = await createConversation()
    const stream = clarkIncremental(["send", "--stream", id, "long answer"])
    await stream.waitFor("begun ")

    const stopped = await clark(["stop", id])
    expect(stopped).toMatchObject({ code: 0, stderr: "" })
    expect(stopped.stdout).toBe("stopped\n")

    // The reply was not finished: the sending command says so and fails.
    const ended = await stream.done
    expect(ended.code).toBe(1)
    expect(ended.stdout).toBe("begun \n")
    expect(ended.stderr).toBe("TURN_STOPPED: the reply was stopped before it was done\n")

    const again = await clark(["stop", id])
    expect(again).toMatchObject({ code: 0, stdout: "nothing was running\n" })
    const json = await clark(["stop", "--json", id])
    expect(JSON.parse(json.stdout)).toEqual({ stopped: false })
  }, slow)

  it("without a conversation stops everything and prints the counts", async () => {
    const id = await createConversation()
    const stream = clarkIncremental(["send", "--stream", id, "long story"])
    await stream.waitFor("begun ")

    const stopped = await clark(["stop"])
    expect(stopped).toMatchObject({ code: 0, stderr: "" })
    expect(stopped.stdout).toMatch(/^stopped: 1 turns, \d+ waiting, \d+ jobs, \d+ commands\n$/)
    expect(await stream.done).toMatchObject({ code: 1, stderr: "TURN_STOPPED: the reply was stopped before it was done\n" })

    const json = await clark(["stop", "--json"])
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({ stopped: { turns: 0, waiting: 0, jobs: 0, commands: 0 } })
  }, slow)

  it("an unknown conversation is RESOURCE_NOT_FOUND", async () => {
    expectPlainError(await clark(["stop", "conv_absent"]), "RESOURCE_NOT_FOUND")
  }, slow)
})

describe("clark --version", () => {
  it("prints the package's version, answered before the program loads and by the command parser alike", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }
    const [direct, parsed] = await Promise.all([
      runClark(["--version"], { env: baseEnv({}), timeout: commandTimeout }),
      runClark(["node", "--version"], { env: baseEnv({}), timeout: commandTimeout })
    ])
    expect(direct).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" })
    expect(parsed.code).toBe(0)
    expect(parsed.stdout.trim()).toBe(version)
  }, slow)
})

describe("failures before the node answers", () => {
  it("a node that does not listen is NODE_UNREACHABLE; a data dir without identity is IDENTITY_UNREADABLE", async () => {
    const closed = await freePort()
    const [unreachable, noIdentity] = await Promise.all([
      clark(["conversations", "list", "--url", `http://127.0.0.1:${closed}`]),
      clark(["conversations", "list", "--data-dir", path.join(tmp, "absent")])
    ])
    expectPlainError(unreachable, "NODE_UNREACHABLE")
    expectPlainError(noIdentity, "IDENTITY_UNREADABLE")
  }, slow)
})
