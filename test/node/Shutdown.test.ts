/**
 * Message rule 6 at shutdown, on the real `clark node serve` as a child process: SIGTERM (and SIGINT) stop every
 * running turn with its text kept and labelled stopped, cancel every waiting message with its card, end every
 * open stream with its `done`, and the process exits 0 with all of it stored.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { clarkArgs, root } from "../support/Cli.js"
import { freePort } from "../support/Ports.js"
import { makeDataDir } from "../support/NodeServer.js"
import { query, textOf } from "../support/NodeFixtures.js"

const turns = 12
const appSecret = "shutdown-test-app-secret"

interface Followed {
  readonly text: Promise<string>
}

/** POSTs a message to the streaming route and reads the whole SSE body; `firstDelta` resolves at its first delta. */
const follow = (url: string, headers: Record<string, string>, text: string) => {
  let seenDelta: () => void = () => {}
  const firstDelta = new Promise<void>((resolve) => (seenDelta = resolve))
  const body = (async () => {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ text }) })
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let all = ""
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return all
      all += decoder.decode(value, { stream: true })
      if (all.includes("event: delta")) seenDelta()
    }
  })()
  return { firstDelta, text: body } satisfies Followed & { firstDelta: Promise<void> }
}

const doneData = (sse: string) => {
  const block = sse.split("\n\n").find((b) => b.includes("event: done"))
  return block === undefined ? undefined : JSON.parse(block.split("\n").find((l) => l.startsWith("data: "))!.slice(6))
}

const runShutdown = async (signal: NodeJS.Signals) => {
  const dataDir = makeDataDir()
  const scriptFile = path.join(path.dirname(dataDir), `${path.basename(dataDir)}-script.json`)
  fs.writeFileSync(scriptFile, JSON.stringify({ rules: [{ match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }] }] }))
  const port = await freePort()
  const child = spawn(
    process.execPath,
    clarkArgs(["node", "serve", "--data-dir", dataDir, "--port", String(port), "--model", `scripted:${scriptFile}`]),
    { cwd: root, env: { ...process.env, CC_APP_SECRET: appSecret }, stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout.on("data", (chunk) => (output += String(chunk)))
  child.stderr.on("data", (chunk) => (output += String(chunk)))
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  try {
    const base = `http://127.0.0.1:${port}`
    for (let attempt = 0; ; attempt++) {
      const status = await fetch(`${base}/health`).then((r) => r.status, () => 0)
      if (status === 200) break
      if (attempt > 300 || child.exitCode !== null) throw new Error(`the node never answered /health:\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
    const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
    const create = () =>
      fetch(`${base}/conversations`, { method: "POST", headers, body: "{}" }).then(async (r) => ((await r.json()) as { conversationId: string }).conversationId)

    const ids = await Promise.all(Array.from({ length: turns }, create))
    const streams = ids.map((id) => follow(`${base}/conversations/${id}/messages/stream`, headers, "forever and ever"))
    await Promise.all(streams.map((s) => s.firstDelta))
    // A message from another surface waits behind the first conversation's turn.
    const cliHeaders = { authorization: `Bearer ${token}`, "content-type": "application/json" }
    const waiting = fetch(`${base}/conversations/${ids[0]}/messages`, {
      method: "POST",
      headers: cliHeaders,
      body: JSON.stringify({ text: "queued" })
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { resolution: string } }))
    for (let attempt = 0; query(dataDir, "SELECT 1 FROM messages WHERE status = 'waiting'").length === 0; attempt++) {
      if (attempt > 300) throw new Error("the message never waited")
      await new Promise((resolve) => setTimeout(resolve, 20))
    }

    child.kill(signal)
    const ended = await Promise.all(streams.map((s) => s.text))
    const waited = await waiting
    const exited = await exit
    return { dataDir, ids, ended, waited, exited, output }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
}

describe("graceful shutdown of a real node process", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal}: every running turn stopped and stored, the waiting message cancelled, streams ended, exit 0`, async () => {
      const { dataDir, ended, exited, ids, output, waited } = await runShutdown(signal)
      expect(exited, output).toEqual({ code: 0, signal: null })
      for (const sse of ended) {
        const done = doneData(sse)
        expect(done, sse).toMatchObject({ resolution: "stopped" })
        expect(done.timeline.entries.at(-1)).toMatchObject({ status: "stopped", note: "Stopped because the node shut down." })
      }
      expect(waited.status).toBe(200)
      expect(waited.body.resolution).toBe("cancelled")
      const replies = query(dataDir, "SELECT conversation_id, status, note, blocks FROM messages WHERE role = 'assistant'")
      expect(replies.filter((r) => r.status === "stopped")).toHaveLength(ids.length)
      for (const reply of replies.filter((r) => r.status === "stopped")) {
        expect(textOf({ blocks: JSON.parse(reply.blocks) })).toBe("start ")
      }
      expect(replies.filter((r) => r.status === "cancelled")).toMatchObject([
        { conversation_id: ids[0], note: "Stopped before it started." }
      ])
      expect(query(dataDir, "SELECT 1 FROM messages WHERE status IN ('writing', 'waiting')")).toEqual([])
    }, 120_000)
  }
})
