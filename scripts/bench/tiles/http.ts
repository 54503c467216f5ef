/**
 * `npm run bench:tiles` through HTTP: the compiled node on a fresh data dir, its policy and key set as the
 * person, then GET /map-tiles/{z}/{x}/{y} cache hits one at a time and in flight, and new tiles until a 429.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { build, freePort, log, root, seconds } from "../Common.js"
import { type Latencies, summarise } from "./measure.js"
import { policyFor } from "./provider.js"
import { int, ms } from "./report.js"
import { settings } from "./settings.js"

// ---------------------------------------------------------------------------
// Through HTTP: the compiled node

export interface HttpFigures {
  readonly sequential: Latencies
  readonly concurrent: Latencies
  readonly rateLimited: string
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

export const request = (
  port: number,
  method: string,
  requestPath: string,
  headers: Record<string, string>,
  body?: unknown,
  timeoutMs?: number
): Promise<{ readonly status: number; readonly headers: http.IncomingHttpHeaders; readonly body: Buffer }> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const outgoing = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: requestPath,
        agent,
        headers: { ...headers, ...(payload === undefined ? {} : { "content-type": "application/json" }) }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
        response.on("error", reject)
      }
    )
    outgoing.on("error", reject)
    if (timeoutMs !== undefined) outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    outgoing.end(payload)
  })

export const expectOk = async (what: string, pending: ReturnType<typeof request>) => {
  const response = await pending
  if (response.status !== 200) throw new Error(`${what}: ${response.status} ${response.body.toString("utf8").slice(0, 300)}`)
  return response
}

export const throughHttp = async (origin: string): Promise<HttpFigures> => {
  build("node")
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-tiles-"))
  const dataDir = path.join(tmp, "data")
  const port = await freePort()
  const appSecret = randomBytes(24).toString("base64url")
  const child = spawn(process.execPath, ["bin/clark.js", "node", "serve", "--data-dir", dataDir, "--port", String(port)], {
    cwd: root,
    env: { ...process.env, CC_APP_SECRET: appSecret },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const output: Array<string> = []
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
  try {
    const started = Date.now()
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the node exited (${child.exitCode}): ${output.join("").slice(-2000)}`)
      if (Date.now() - started > 60_000) throw new Error("the node did not answer GET /health within 60 s")
      // A connection accepted while the server is still starting may never be answered: 1 s each.
      const healthy = await request(port, "GET", "/health", {}, undefined, 1000).then((response) => response.status === 200, () => false)
      if (healthy) break
      await sleep(100)
    }
    log(`  node healthy on port ${port} after ${seconds(Date.now() - started)}`)
    const token = String(JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken)
    const machine = { authorization: `Bearer ${token}` }
    const person = { ...machine, "x-app-secret": appSecret }
    await expectOk("PUT /map-tiles/key", request(port, "PUT", "/map-tiles/key", person, { origin, value: "bench-key-value" }))
    await expectOk(
      "PUT /preferences/maps.tilePolicy",
      request(port, "PUT", "/preferences/maps.tilePolicy", person, { value: policyFor(origin, true) })
    )
    const hot = 48
    const tilePath = (i: number) => `/map-tiles/8/${i % hot}/0`
    for (let i = 0; i < hot; i++) {
      const response = await expectOk(`GET ${tilePath(i)}`, request(port, "GET", tilePath(i), machine))
      if (response.headers["content-type"] !== "image/png" || response.headers["x-content-type-options"] !== "nosniff") {
        throw new Error(`GET ${tilePath(i)}: ${JSON.stringify(response.headers)}`)
      }
      if (response.body.length !== settings.tileBytes) throw new Error(`GET ${tilePath(i)}: ${response.body.length} bytes`)
    }
    const one = async (i: number) => {
      const before = performance.now()
      await expectOk(`GET ${tilePath(i)}`, request(port, "GET", tilePath(i), machine))
      return performance.now() - before
    }
    // Warm-up, then one at a time over one keep-alive connection.
    for (let i = 0; i < 500; i++) await one(i)
    const sequentialSamples: Array<number> = []
    const sequentialStart = performance.now()
    for (let i = 0; i < settings.http; i++) sequentialSamples.push(await one(i))
    const sequential = summarise(sequentialSamples, performance.now() - sequentialStart)
    log(`  sequential: p50 ${ms(sequential.p50)} ms, p99 ${ms(sequential.p99)} ms, ${int(sequential.perSecond)}/s`)
    const concurrentSamples: Array<number> = []
    let next = 0
    const concurrentStart = performance.now()
    await Promise.all(Array.from({ length: settings.httpConcurrency }, async () => {
      while (next < settings.http) concurrentSamples.push(await one(next++))
    }))
    const concurrent = summarise(concurrentSamples, performance.now() - concurrentStart)
    log(`  ${settings.httpConcurrency} in flight: p50 ${ms(concurrent.p50)} ms, p99 ${ms(concurrent.p99)} ms, ${int(concurrent.perSecond)}/s`)
    // New tiles until the limit answers (the burst was spent filling the cache, minus what refilled since).
    let rateLimited = "no 429 within 200 new tiles"
    for (let i = 0; i < 200; i++) {
      const response = await request(port, "GET", `/map-tiles/9/${i}/1`, machine)
      if (response.status === 429) {
        const body = JSON.parse(response.body.toString("utf8"))
        rateLimited = `429 ${body.code} after ${i} new tiles, \`Retry-After: ${response.headers["retry-after"]}\`, \`retryAfterSeconds: ${body.retryAfterSeconds}\``
        break
      }
      if (response.status !== 200) throw new Error(`GET /map-tiles/9/${i}/1: ${response.status} ${response.body.toString("utf8")}`)
    }
    log(`  ${rateLimited}`)
    return { sequential, concurrent, rateLimited }
  } finally {
    child.kill("SIGTERM")
    await Promise.race([new Promise((resolve) => child.once("exit", resolve)), sleep(5000)])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    agent.destroy()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}
