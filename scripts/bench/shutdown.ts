/**
 * `npm run bench:shutdown`: graceful shutdown of the compiled node with many running turns (message rule 6).
 *
 * Each round starts `node bin/clark.js node serve` on a fresh data dir with a scripted model whose turns never end,
 * opens BENCH_SHUTDOWN_TURNS streams (default 100, one conversation each) and waits for each one's first delta,
 * then sends SIGTERM and times (a) every stream's `done` at the client and (b) the process's exit. Afterwards it
 * checks the store: every reply stopped with its text, none left writing. BENCH_SHUTDOWN_ROUNDS rounds (default 3).
 * Target: exit ≤ 2 s after SIGTERM with 100 running turns. Writes its section of docs/benchmarks.md.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { startChild, stopAll } from "./Children.js"
import { build, freePort, log, percentile, positiveInt, root, seconds, writeDocs } from "./Common.js"

const settings = {
  turns: positiveInt("BENCH_SHUTDOWN_TURNS", 100),
  rounds: positiveInt("BENCH_SHUTDOWN_ROUNDS", 3)
}
const targetMs = 2000
const appSecret = "bench-shutdown-app-secret"

interface Sqlite {
  prepare(sql: string): { all(): Array<Record<string, unknown>> }
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string, options: { readonly: boolean }) => Sqlite

const stream = async (url: string, headers: Record<string, string>, onDelta: () => void) => {
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ text: "forever" }) })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  let delta = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return { text, endedAt: performance.now() }
    text += decoder.decode(value, { stream: true })
    if (!delta && text.includes("event: delta")) {
      delta = true
      onDelta()
    }
  }
}

const round = async (tmp: string, index: number) => {
  const dataDir = path.join(tmp, `node-${index}`)
  const scriptFile = path.join(tmp, "script.json")
  const port = await freePort()
  const child = startChild("node", [
    "bin/clark.js", "node", "serve", "--data-dir", dataDir, "--port", String(port), "--model", `scripted:${scriptFile}`
  ], { CC_APP_SECRET: appSecret, LOG_LEVEL: "warn" })
  const base = `http://127.0.0.1:${port}`
  for (let attempt = 0; (await fetch(`${base}/health`).then((r) => r.status, () => 0)) !== 200; attempt++) {
    if (attempt > 300) throw new Error(`the node never answered /health:\n${child.output.join("\n")}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
  const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
  const ids = await Promise.all(Array.from({ length: settings.turns }, () =>
    fetch(`${base}/conversations`, { method: "POST", headers, body: "{}" }).then(async (r) => ((await r.json()) as { conversationId: string }).conversationId)))
  let deltas = 0
  let allWriting: () => void = () => {}
  const writing = new Promise<void>((resolve) => (allWriting = resolve))
  const streams = ids.map((id) =>
    stream(`${base}/conversations/${id}/messages/stream`, headers, () => {
      if (++deltas === ids.length) allWriting()
    }))
  await writing
  const signalled = performance.now()
  child.process.kill("SIGTERM")
  const ended = await Promise.all(streams)
  await child.exited
  const exitMs = performance.now() - signalled
  const doneMs = ended.map((s) => s.endedAt - signalled).sort((a, b) => a - b)
  const db = new Database(path.join(dataDir, "node.db"), { readonly: true })
  const replies = db.prepare("SELECT status FROM messages WHERE role = 'assistant'").all()
  db.close()
  const stopped = replies.filter((r) => r.status === "stopped").length
  const withDone = ended.filter((s) => s.text.includes("event: done")).length
  return { exitMs, doneP50: percentile(doneMs, 0.5), doneMax: doneMs.at(-1)!, stopped, withDone, code: child.process.exitCode }
}

const main = async () => {
  const startedAt = Date.now()
  build("node")
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-shutdown-"))
  fs.writeFileSync(path.join(tmp, "script.json"), JSON.stringify({ default: [{ delta: "start " }, { delay: 3_600_000 }] }))
  const results = []
  try {
    for (let i = 0; i < settings.rounds; i++) {
      const r = await round(tmp, i)
      log(`round ${i + 1}: exit ${r.exitMs.toFixed(0)} ms after SIGTERM (code ${r.code}); done p50 ${r.doneP50.toFixed(0)} ms, last ${r.doneMax.toFixed(0)} ms; ${r.withDone}/${settings.turns} streams ended with done, ${r.stopped} replies stored stopped`)
      results.push(r)
    }
  } finally {
    await stopAll()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  const worst = Math.max(...results.map((r) => r.exitMs))
  const complete = results.every((r) => r.withDone === settings.turns && r.stopped === settings.turns && r.code === 0)
  const rows = results.map((r, i) =>
    `| ${i + 1} | ${r.exitMs.toFixed(0)} | ${r.doneP50.toFixed(0)} | ${r.doneMax.toFixed(0)} | ${r.withDone} / ${settings.turns} | ${r.stopped} | ${r.code} |`)
  const section = `## Local node: graceful shutdown

Written by \`npm run bench:shutdown\` (scripts/bench/shutdown.ts) on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${os.cpus().length} cores.
The compiled node (\`node bin/clark.js node serve\`) with ${settings.turns} running turns (one stream each, every one past its first
delta), then SIGTERM. Times in ms from the signal: every stream's \`done\` at the client, and the process's exit (database closed).

| round | exit | done p50 | last done | streams ended with done | replies stored stopped | exit code |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join("\n")}

Target: exit ≤ ${targetMs} ms with ${settings.turns} running turns: ${worst <= targetMs && complete ? "met" : "NOT met"} (worst ${worst.toFixed(0)} ms${complete ? "" : "; some turn was not ended and stored as stopped"}).
`
  log(`Written to ${writeDocs("shutdown", section)} (benchmark took ${seconds(Date.now() - startedAt)})`)
}

process.chdir(root)
main().catch(async (error) => {
  console.error(error)
  await stopAll()
  process.exit(1)
})
