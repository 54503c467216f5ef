/**
 * `npm run bench:node`: the local node's streaming and stopping, with the scripted model.
 *
 * 1. Builds the product (`tsc`) and starts the compiled node as a child process
 *    (`node bin/clark.js node serve --model scripted:<script>` on a fresh data dir), with a small
 *    preload that reports the child's heap and CPU time over IPC; RSS is read from /proc.
 * 2. Memory at rest: 500 long turns with their streams open, heap and RSS after a full collection.
 * 3. Concurrent SSE streams (1, 100, 500), each in its own conversation: every stream's turn writes
 *    BENCH_DELTAS deltas BENCH_DELAY_MS apart, each delta's text the model's `process.hrtime.bigint()`
 *    when it produced it (the script's `{"stamp": true}` step). Measured per delta:
 *    - delta → bytes, inside the node: the preload wraps net.Socket's `_write`/`_writev` and, for every
 *      stamped delta in the bytes written, keeps the end of that write minus the stamp: the node's path
 *      from the model handing over the delta to its bytes leaving (turn engine, publishing, SSE framing,
 *      the write). The target "≤ 1 ms p99 added per delta" is judged on it;
 *    - delivery latency at the client: the driver's `process.hrtime.bigint()` when the chunk reaches its
 *      `data` handler minus the stamp. CLOCK_MONOTONIC is shared by the processes of one machine, so this
 *      is delta → bytes plus the loopback and the driver being scheduled to read it;
 *    - gap: two consecutive deltas of a stream at the driver, minus the scripted delay, over all gaps
 *      and over the steady state only (both deltas after every stream of the run had its first one).
 *      Gaps also contain the lateness of the model's own timer when the event loop is busy (e.g. with
 *      the start-up of the other streams), which the delivery latency leaves out.
 *    Also the time to first event (request sent to the first `delta` byte), the node's memory and CPU.
 *    The same client drives a plain `node:http` SSE server that writes the same kind of stamped deltas
 *    on the same timers, for reference: its figures are the floor of the machine, Node and the driver.
 *    Every level runs in two core layouts on the same server process, set with `taskset` between runs:
 *    separate cores (the server on CPU 0, the driver on CPU 1) and shared cores (both on all CPUs).
 *    Linux wakes a socket's reader on the writer's CPU, so with shared cores the driver reads a delta
 *    only once the node yields the CPU it wrote it from; a host app has cores of its own in production,
 *    so the figures at the client are judged with separate cores (see the Cores note of the report).
 * 4. Stop: 100 long turns; one at a time, POST /conversations/{id}/stop and the time until that
 *    conversation's stream has ended.
 * 5. Emergency stop: 200 long turns, POST /stop and the time until all 200 streams have ended
 *    (BENCH_ESTOP_ROUNDS rounds).
 * 6. Prints the tables and rewrites its section of docs/benchmarks.md.
 *
 * Environment: BENCH_DELTAS (default 40), BENCH_DELAY_MS (default 25), BENCH_LEVELS (concurrent streams
 * per run, default 1,100,500), BENCH_CORES (core layouts of the stream runs: separate,shared (default),
 * separate or shared), BENCH_ESTOP_ROUNDS (default 3),
 * BENCH_NODE_FLAGS: extra Node flags for the node under test, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`
 * (the profile is written when the node exits, at the end of the node's part); a run with flags
 * prints its tables but leaves docs/benchmarks.md alone.
 */
import { spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import { assertRunning, type Child, childFailure, killAll, startChild, stopAll, stopChild } from "./Children.js"
import {
  build,
  freePort,
  log,
  machineBusyMs,
  otherWorkLimit,
  percentile,
  positiveInt,
  seconds,
  writeDocs
} from "./Common.js"

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

/** Where the stream runs put the server under test and the driver: see "Core layouts" below. */
type Layout = "separate" | "shared"

const coreChoices = new Map<string, ReadonlyArray<Layout>>([
  ["separate,shared", ["separate", "shared"]],
  ["separate", ["separate"]],
  ["shared", ["shared"]]
])

/** BENCH_CORES: the core layouts of the stream runs, in the order they run. */
const coreLayouts = (): ReadonlyArray<Layout> => {
  const raw = process.env.BENCH_CORES ?? ""
  const layouts = coreChoices.get(raw === "" ? "separate,shared" : raw.replace(/\s+/g, ""))
  if (layouts === undefined) throw new Error(`BENCH_CORES must be separate,shared, separate or shared, got ${JSON.stringify(raw)}`)
  return layouts
}

const settings = {
  deltas: positiveInt("BENCH_DELTAS", 40),
  delayMs: positiveInt("BENCH_DELAY_MS", 25),
  /** Concurrent streams per run; the single stream runs `singleRepeats` times in sequence. */
  levels: (process.env.BENCH_LEVELS ?? "1,100,500").split(",").map((level) => {
    const value = Number(level.trim())
    if (!Number.isInteger(value) || value < 1 || value > 550) throw new Error(`BENCH_LEVELS: ${JSON.stringify(level)} is not 1 to 550`)
    return value
  }),
  singleRepeats: 5,
  cores: coreLayouts(),
  warmupStreams: 50,
  stopTurns: 100,
  emergencyTurns: 200,
  emergencyRounds: positiveInt("BENCH_ESTOP_ROUNDS", 3),
  nodeFlags: (process.env.BENCH_NODE_FLAGS ?? "").split(/\s+/).filter((flag) => flag.length > 0),
  /** A long turn: one delta, then this long before anything else. */
  longDelayMs: 120_000,
  targets: {
    addedPerDeltaP99Ms: 1,
    memoryStreams: 500,
    memoryMiB: 512,
    stopP99Ms: 50,
    emergencyMs: 200
  },
  /** Upper bounds that keep a broken run from hanging. */
  runDeadlineMs: 60_000,
  waitDeadlineMs: 30_000
}

const streamText = "stream please"
const longText = "long please"

/**
 * The scripted model: one rule for measured streams (every delta stamped with the monotonic clock when
 * the model produced it), one for turns that only a stop ends.
 */
const script = {
  rules: [
    {
      match: "^stream",
      steps: Array.from({ length: settings.deltas }, (_, i) => [
        ...(i === 0 ? [] : [{ delay: settings.delayMs }]),
        { stamp: true }
      ]).flat()
    },
    { match: "^long", steps: [{ delta: "started; " }, { delay: settings.longDelayMs }, { delta: "never sent" }] }
  ],
  default: [{ delta: "unexpected message" }]
}

/**
 * Loaded into the node with `--import`: samples of its own memory and CPU over IPC, every 100 ms and
 * on request ("gc" first runs a full collection; the child runs with --expose-gc for it).
 *
 * It also measures what the node adds per delta, inside the node: every write that hands bytes to a socket
 * (net.Socket's _write and _writev, which run when the bytes go to the kernel, after any cork) is scanned
 * for stamped deltas (\`"text":"<hrtime>"\`), and the time from each stamp to the end of that write is
 * kept; "written" sends the values kept since the last "written" and starts again.
 */
const preloadSource = `
import net from "node:net"
let written = []
const marker = '"text":"'
const scan = (chunk, at) => {
  const text = typeof chunk === "string" ? chunk : chunk.latin1Slice(0, chunk.length)
  for (let i = text.indexOf(marker); i !== -1; i = text.indexOf(marker, i + 1)) {
    const start = i + marker.length
    const end = text.indexOf('"', start)
    const digits = text.slice(start, end)
    // A stamp is one hrtime reading; a reply's text in the done event is many of them run together.
    if (end !== -1 && /^[0-9]{6,20}$/.test(digits) && BigInt(digits) <= at) written.push(Number(at - BigInt(digits)) / 1e6)
  }
}
for (const name of ["_write", "_writev"]) {
  const original = net.Socket.prototype[name]
  net.Socket.prototype[name] = function (data, ...rest) {
    const result = original.call(this, data, ...rest)
    const at = process.hrtime.bigint()
    if (name === "_write") scan(data, at)
    else for (const entry of data) scan(entry.chunk, at)
    return result
  }
}
const sample = (kind) => {
  const m = process.memoryUsage()
  const c = process.cpuUsage()
  try {
    process.send?.({ kind, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, cpuMicros: c.user + c.system })
  } catch {}
}
setInterval(() => sample("tick"), 100).unref()
process.on("message", (message) => {
  if (message === "gc" && typeof globalThis.gc === "function") globalThis.gc()
  if (message === "gc" || message === "sample") sample("reply")
  if (message === "written") {
    try {
      process.send?.({ kind: "written", values: written })
    } catch {}
    written = []
  }
})
process.channel?.unref()
`

/**
 * The reference: plain node:http, the same kind of SSE bytes on the same timers (a setTimeout per delta,
 * the next one set after the write), each delta stamped with process.hrtime.bigint() at its write, no
 * storage. Started with `node -e`.
 */
const baselineSource = `
const http = require("node:http")
const [deltas, delay, port] = process.argv.slice(1).map(Number)
let task = 0
http.createServer((req, res) => {
  if (req.method === "GET") return res.end('{"status":"ok"}')
  req.resume()
  req.on("end", () => {
    const id = "task_" + ++task
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    res.write(": connected\\n\\n")
    let seq = 0
    const send = () => {
      seq++
      res.write("id: " + id + ":" + seq + "\\nevent: delta\\ndata: " + JSON.stringify({ text: String(process.hrtime.bigint()) }) + "\\n\\n")
      if (seq < deltas) return setTimeout(send, delay)
      res.end("id: " + id + ":" + (seq + 1) + "\\nevent: done\\ndata: " + JSON.stringify({ resolution: "answered" }) + "\\n\\n")
    }
    send()
  })
}).listen(port, "127.0.0.1")
`

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const now = () => performance.now()
const ms2 = (value: number) => (Number.isNaN(value) ? "–" : value.toFixed(2))
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)


const sorted = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)

const withDeadline = async <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${seconds(ms)}`)), ms)
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs `f` over `items`, at most `limit` at a time. */
const mapLimit = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await f(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}


// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

interface ChildSample {
  readonly kind: "tick" | "reply" | "written"
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly cpuMicros: number
}

/** The node under test: a child with the preload's message channel. */
interface NodeChild extends Child {
  /** Latest sample from the preload. */
  latest: ChildSample | undefined
  readonly replies: Array<(sample: ChildSample) => void>
  readonly writtenReplies: Array<(values: ReadonlyArray<number>) => void>
}

const startNodeChild = (args: ReadonlyArray<string>, env: Record<string, string>): NodeChild => {
  const handle: NodeChild = Object.assign(startChild("node", args, env, true), {
    latest: undefined,
    replies: [],
    writtenReplies: []
  })
  handle.process.on("message", (message: ChildSample | { readonly kind: "written"; readonly values: ReadonlyArray<number> }) => {
    if ("values" in message) return handle.writtenReplies.shift()?.(message.values)
    handle.latest = message
    if (message.kind === "reply") handle.replies.shift()?.(message)
  })
  return handle
}

/** The node under test, whose preload answers; the reference server has none. */
const asNode = (child: Child): NodeChild => {
  if (!("replies" in child)) throw new Error(`${child.name} has no preload to ask`)
  return child as NodeChild
}

/** A sample from the child's preload, after a full collection when `gc`. */
const askSample = (server: Child, gc: boolean) => {
  const child = asNode(server)
  return withDeadline(
    new Promise<ChildSample>((resolve) => {
      child.replies.push(resolve)
      child.process.send(gc ? "gc" : "sample")
    }),
    5000,
    `${child.name}: memory sample`
  )
}

/** The node's delta → bytes times (ms) since the previous call, from the preload. */
const askWritten = (server: Child) => {
  const child = asNode(server)
  return withDeadline(
    new Promise<ReadonlyArray<number>>((resolve) => {
      child.writtenReplies.push(resolve)
      child.process.send("written")
    }),
    5000,
    `${child.name}: delta → bytes times`
  )
}

/** VmRSS of a process, in bytes, from /proc (undefined once it is gone). */
const readRss = (pid: number): number | undefined => {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

const readHwm = (pid: number): number | undefined => {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

/** RSS every 100 ms from /proc, heap from the preload's latest tick: the peaks over a window. */
const trackMemory = (server: Child) => {
  const child = asNode(server)
  let peakRss = 0
  let peakHeapUsed = 0
  let peakHeapTotal = 0
  let samples = 0
  const take = () => {
    const rss = readRss(child.process.pid!)
    if (rss !== undefined) {
      peakRss = Math.max(peakRss, rss)
      samples++
    }
    if (child.latest !== undefined) {
      peakHeapUsed = Math.max(peakHeapUsed, child.latest.heapUsed)
      peakHeapTotal = Math.max(peakHeapTotal, child.latest.heapTotal)
    }
  }
  take()
  const timer = setInterval(take, 100)
  return () => {
    clearInterval(timer)
    take()
    return { peakRss, peakHeapUsed, peakHeapTotal, samples }
  }
}

// ---------------------------------------------------------------------------
// Core layouts
// ---------------------------------------------------------------------------

/**
 * Separate cores: the server under test on one CPU, the driver on another. On a shared CPU, Linux wakes
 * the driver (the socket's reader) on the CPU of the server that wrote (a sync wake-up), so the driver
 * reads a delta only once the server yields that CPU, e.g. after finishing a turn right after its last
 * delta. A host app runs on cores of its own in production: separate cores measure what the node adds.
 */
const separateCpus = { server: "0", driver: "1" }

interface Cores {
  /** The driver's CPU list at start (e.g. "0,1" or "0-3"), which the servers inherit: shared cores. */
  readonly shared: string | undefined
  /** Why the stream runs are not measured with separate cores, when they are not. */
  separateSkipped: string | undefined
  /** Whether an affinity was changed since the last return to shared cores (only then is one due). */
  pinned: boolean
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Runs util-linux taskset and returns its output; throws with the reason when it cannot. */
const taskset = (...args: Array<string>): string => {
  const result = spawnSync("taskset", args, { encoding: "utf8" })
  const command = `taskset ${args.join(" ")}`
  if (result.error !== undefined) throw new Error(`${command}: ${result.error.message}`)
  if (result.status !== 0) throw new Error(`${command} exited with ${result.status ?? result.signal}: ${result.stderr.trim()}`)
  return result.stdout
}

/** Puts every thread of a process on `cpus` (a list as taskset reads it, e.g. "0" or "0-1"). */
const pin = (pid: number, cpus: string) => void taskset("-a", "-p", "-c", cpus, String(pid))

/** Shared cores only: no affinity is ever changed. */
const sharedOnly = (reason: string): Cores => ({ shared: undefined, separateSkipped: reason, pinned: false })

/** Whether separate cores can be set up (2 CPUs or more, taskset at hand) and the driver's CPUs. */
const probeCores = (): Cores => {
  if (!settings.cores.includes("separate")) return sharedOnly(`BENCH_CORES=${settings.cores.join(",")}`)
  const cpus = os.availableParallelism()
  if (cpus < 2) return sharedOnly(`${cpus} CPU available, separate cores need 2`)
  try {
    const list = /list:\s*(\S+)/.exec(taskset("-p", "-c", String(process.pid)))?.[1]
    if (list === undefined) throw new Error("taskset -p -c printed no CPU list")
    return { shared: list, separateSkipped: undefined, pinned: false }
  } catch (error) {
    return sharedOnly(messageOf(error))
  }
}

/**
 * Puts the server and the driver in `layout` and returns the layout they are in: shared cores when
 * separate ones cannot be set (the reason is kept, logged and reported, and later runs skip them too).
 */
const enterLayout = (cores: Cores, layout: Layout, server: Child): Layout => {
  if (layout === "separate" && cores.separateSkipped === undefined) {
    try {
      pin(server.process.pid!, separateCpus.server)
      cores.pinned = true
      pin(process.pid, separateCpus.driver)
      return "separate"
    } catch (error) {
      cores.separateSkipped = messageOf(error)
      log(`  separate cores skipped, shared cores instead: ${cores.separateSkipped}`)
    }
  }
  if (cores.pinned && cores.shared !== undefined) {
    pin(server.process.pid!, cores.shared)
    pin(process.pid, cores.shared)
    cores.pinned = false
  }
  return "shared"
}

// ---------------------------------------------------------------------------
// HTTP client: node:http with keep-alive agents; streams on their own agent
// ---------------------------------------------------------------------------

interface Target {
  readonly label: string
  readonly port: number
  readonly token: string
  readonly child: Child
}

/**
 * A keep-alive socket the server closed while the request was on its way: retried once, as Node's
 * documentation advises; counted in the report.
 */
const isStaleSocket = (request: http.ClientRequest, error: Error) =>
  request.reusedSocket && (error as NodeJS.ErrnoException).code === "ECONNRESET"

let connectionRetries = 0

const streamAgent = new http.Agent({ keepAlive: true, maxSockets: 600, maxFreeSockets: 600, scheduling: "lifo" })
const controlAgent = new http.Agent({ keepAlive: true, maxSockets: 32, maxFreeSockets: 32 })

const call = (
  target: Target,
  method: string,
  requestPath: string,
  body?: unknown,
  agent: http.Agent = controlAgent
): Promise<{ readonly status: number; readonly body: any }> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? "" : JSON.stringify(body)
    const send = (retried: boolean) => {
      const request = http.request(
        {
          host: "127.0.0.1",
          port: target.port,
          method,
          path: requestPath,
          agent,
          headers: {
            authorization: `Bearer ${target.token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            "content-length": Buffer.byteLength(payload)
          }
        },
        (response) => {
          const chunks: Array<Buffer> = []
          response.on("data", (chunk: Buffer) => chunks.push(chunk))
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8")
            let parsed: unknown = text
            try {
              parsed = text.length === 0 ? undefined : JSON.parse(text)
            } catch {
              // not JSON: kept as text
            }
            resolve({ status: response.statusCode ?? 0, body: parsed })
          })
          response.on("error", reject)
        }
      )
      request.on("error", (error) => {
        if (!retried && isStaleSocket(request, error)) {
          connectionRetries++
          return send(true)
        }
        reject(error)
      })
      request.end(payload)
    }
    send(false)
  })

const expectStatus = async (
  promise: Promise<{ readonly status: number; readonly body: any }>,
  status: number,
  what: string
) => {
  const response = await promise
  if (response.status !== status) {
    throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body).slice(0, 400)} (expected ${status})`)
  }
  return response.body
}

const waitHealthy = async (target: Target) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    assertRunning(target.child)
    try {
      if ((await call(target, "GET", "/health")).status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw childFailure(target.child, "did not answer GET /health with 200 within 60 s")
}

/** Opens `count` idle keep-alive sockets on the stream agent, so streams do not pay for connecting. */
const warmSockets = (target: Target, count: number) =>
  Promise.all(Array.from({ length: count }, () => call(target, "GET", "/health", undefined, streamAgent)))

const createConversations = (target: Target, count: number) =>
  mapLimit(Array.from({ length: count }, (_, i) => i), 16, async (i) => {
    const body = await expectStatus(call(target, "POST", "/conversations", { title: `bench ${i}` }), 201, "POST /conversations")
    return String(body.conversationId)
  })

let openNow = 0
let openMax = 0

interface SseStream {
  readonly conversationId: string
  sentAt: number
  status: number | undefined
  /** Arrival time of every `delta` event (the chunk it came in). */
  readonly deltas: Array<number>
  /** Delivery latency of every `delta` event whose text is a stamp, in ms: arrival minus stamp. */
  readonly delivery: Array<number>
  doneAt: number | undefined
  endedAt: number | undefined
  resolution: string | undefined
  error: string | undefined
  readonly ended: Promise<void>
  readonly firstDelta: Promise<void>
  readonly abort: () => void
}

/** The stamp in a `delta` event's text (the monotonic clock in ns when it was produced), if it is one. */
const stampOf = (block: string): bigint | undefined => {
  try {
    const text: unknown = JSON.parse(block.slice(block.indexOf("\ndata: ") + 7)).text
    return typeof text === "string" && /^\d+$/.test(text) ? BigInt(text) : undefined
  } catch {
    return undefined
  }
}

const openStream = (target: Target, conversationId: string, text: string): SseStream => {
  const payload = JSON.stringify({ text })
  let markEnded!: () => void
  let markFirst!: () => void
  let failFirst!: (error: Error) => void
  const ended = new Promise<void>((resolve) => (markEnded = resolve))
  const firstDelta = new Promise<void>((resolve, reject) => {
    markFirst = resolve
    failFirst = reject
  })
  firstDelta.catch(() => undefined)
  let counted = false
  let finished = false
  const finish = (error?: string) => {
    if (finished) return
    finished = true
    if (counted) openNow--
    if (error !== undefined && stream.error === undefined) stream.error = error
    if (stream.deltas.length === 0) failFirst(new Error(stream.error ?? "ended before its first delta"))
    markEnded()
  }
  const onResponse = (response: http.IncomingMessage) => {
    stream.status = response.statusCode
    counted = true
    openNow++
    openMax = Math.max(openMax, openNow)
    let buffer = ""
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      const at = now()
      const arrival = process.hrtime.bigint()
      buffer += chunk
      let boundary = buffer.indexOf("\n\n")
      while (boundary !== -1) {
        const block = buffer.slice(0, boundary)
        buffer = buffer.slice(boundary + 2)
        boundary = buffer.indexOf("\n\n")
        if (block.includes("\nevent: delta\n")) {
          stream.deltas.push(at)
          const stamp = stampOf(block)
          if (stamp !== undefined) stream.delivery.push(Number(arrival - stamp) / 1e6)
          if (stream.deltas.length === 1) markFirst()
        } else if (block.includes("\nevent: done\n")) {
          stream.doneAt = at
          const data = block.slice(block.indexOf("\ndata: ") + 7)
          try {
            stream.resolution = String(JSON.parse(data).resolution)
          } catch {
            stream.resolution = "(unreadable)"
          }
        }
      }
    })
    response.on("end", () => {
      stream.endedAt = now()
      finish(response.statusCode === 200 ? undefined : `status ${response.statusCode}: ${buffer.slice(0, 200)}`)
    })
    response.on("error", (error) => finish(error.message))
    response.on("close", () => finish("closed before its end"))
  }
  let request: http.ClientRequest | undefined
  const send = (retried: boolean) => {
    const sent = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path: `/conversations/${conversationId}/messages/stream`,
        agent: streamAgent,
        headers: {
          authorization: `Bearer ${target.token}`,
          accept: "text/event-stream",
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload)
        }
      },
      onResponse
    )
    sent.on("error", (error) => {
      if (!retried && stream.status === undefined && isStaleSocket(sent, error)) {
        connectionRetries++
        stream.sentAt = now()
        return send(true)
      }
      finish(error.message)
    })
    request = sent
    sent.end(payload)
  }
  const stream: SseStream = {
    conversationId,
    sentAt: now(),
    status: undefined,
    deltas: [],
    delivery: [],
    doneAt: undefined,
    endedAt: undefined,
    resolution: undefined,
    error: undefined,
    ended,
    firstDelta,
    abort: () => request?.destroy(new Error("aborted by the benchmark"))
  }
  send(false)
  return stream
}

const awaitAll = async (streams: ReadonlyArray<SseStream>, ms: number, what: string) => {
  try {
    await withDeadline(Promise.all(streams.map((s) => s.ended)), ms, what)
  } catch (error) {
    const open = streams.filter((s) => s.endedAt === undefined && s.error === undefined).length
    for (const s of streams) s.abort()
    throw new Error(`${error instanceof Error ? error.message : String(error)} (${open} of ${streams.length} still open)`)
  }
}

const failures = (streams: ReadonlyArray<SseStream>, resolution: string) =>
  streams.filter((s) => s.status !== 200 || s.error !== undefined || s.endedAt === undefined || s.resolution !== resolution)

const describeFailures = (bad: ReadonlyArray<SseStream>) =>
  bad.slice(0, 3).map((s) => `status ${s.status}, resolution ${s.resolution}, error ${s.error}`).join("; ")

// ---------------------------------------------------------------------------
// Concurrent streams
// ---------------------------------------------------------------------------

interface LevelResult {
  /** Where the server and the driver ran (see "Core layouts"). */
  readonly layout: Layout
  readonly streams: number
  readonly repeats: number
  readonly openMax: number
  readonly wallMs: number
  readonly deltasReceived: number
  readonly ttfe: ReadonlyArray<number>
  /** Every delta's delivery latency (arrival at the driver minus the stamp the model wrote), sorted. */
  readonly delivery: ReadonlyArray<number>
  /** Inside the node: every delta's stamp to the end of the socket write that sent it, sorted (node only). */
  readonly toBytes: ReadonlyArray<number> | undefined
  /** Gap between consecutive deltas of a stream at the driver minus the scripted delay, all gaps, sorted. */
  readonly gaps: ReadonlyArray<number>
  /** The same for the gaps whose two deltas both arrived after every stream of the run had its first one. */
  readonly steadyGaps: ReadonlyArray<number>
  /** Per stream: (last delta − first delta − (n−1)·delay) / (n−1), then the mean over streams. */
  readonly meanGap: number
  readonly failed: number
  readonly failureDetail: string
  /** CPU time of the server over the wall time, in % of one core (undefined for the baseline). */
  readonly serverCpu: number | undefined
  readonly driverCpu: number
  readonly memory: {
    readonly idleRss: number
    readonly idleHeapUsed: number
    readonly peakRss: number
    readonly peakHeapUsed: number
    readonly peakHeapTotal: number
  } | undefined
}

const runLevel = async (
  target: Target,
  layout: Layout,
  streams: number,
  repeats: number,
  measureNode: boolean
): Promise<LevelResult> => {
  const conversations = measureNode ? await createConversations(target, streams * repeats) : []
  const idle = measureNode ? await askSample(target.child, true) : undefined
  const idleRss = measureNode ? readRss(target.child.process.pid!) ?? 0 : 0
  const memory = measureNode ? trackMemory(target.child) : undefined
  const cpuBefore = measureNode ? await askSample(target.child, false) : undefined
  if (measureNode) await askWritten(target.child)
  const driverBefore = process.cpuUsage()
  const all: Array<SseStream> = []
  /** Per stream: when every stream of its run (repeat) had its first delta. */
  const steadyFrom = new Map<SseStream, number>()
  let wallMs = 0
  openMax = 0
  for (let repeat = 0; repeat < repeats; repeat++) {
    await warmSockets(target, streams)
    const started = now()
    const batch = Array.from(
      { length: streams },
      (_, i) => openStream(target, measureNode ? conversations[repeat * streams + i]! : `c${i}`, streamText)
    )
    await awaitAll(batch, settings.runDeadlineMs, `${target.label}: ${streams} streams`)
    wallMs += now() - started
    all.push(...batch)
    const lastFirst = Math.max(...batch.map((s) => s.deltas[0] ?? Number.NEGATIVE_INFINITY))
    for (const s of batch) steadyFrom.set(s, lastFirst)
  }
  const driverCpu = process.cpuUsage(driverBefore)
  const cpuAfter = measureNode ? await askSample(target.child, false) : undefined
  const toBytes = measureNode ? sorted(await askWritten(target.child)) : undefined
  const peaks = memory?.()
  assertRunning(target.child)

  const bad = failures(all, "answered")
  const good = all.filter((s) => !bad.includes(s))
  const ttfe: Array<number> = []
  const delivery: Array<number> = []
  const gaps: Array<number> = []
  const steadyGaps: Array<number> = []
  const means: Array<number> = []
  let incomplete = 0
  let unstamped = 0
  for (const s of good) {
    if (s.deltas.length !== settings.deltas) {
      incomplete++
      continue
    }
    if (s.delivery.length !== s.deltas.length) {
      unstamped++
      continue
    }
    ttfe.push(s.deltas[0]! - s.sentAt)
    delivery.push(...s.delivery)
    const steady = steadyFrom.get(s)!
    for (let i = 1; i < s.deltas.length; i++) {
      const gap = s.deltas[i]! - s.deltas[i - 1]! - settings.delayMs
      gaps.push(gap)
      if (s.deltas[i - 1]! > steady) steadyGaps.push(gap)
    }
    means.push((s.deltas.at(-1)! - s.deltas[0]! - (s.deltas.length - 1) * settings.delayMs) / (s.deltas.length - 1))
  }
  return {
    layout,
    streams,
    repeats,
    openMax,
    wallMs,
    deltasReceived: all.reduce((n, s) => n + s.deltas.length, 0),
    ttfe: sorted(ttfe),
    delivery: sorted(delivery),
    toBytes,
    gaps: sorted(gaps),
    steadyGaps: sorted(steadyGaps),
    meanGap: means.reduce((a, b) => a + b, 0) / Math.max(1, means.length),
    failed: bad.length + incomplete + unstamped,
    failureDetail: [
      ...(bad.length > 0 ? [describeFailures(bad)] : []),
      ...(incomplete > 0 ? [`${incomplete} streams with a wrong number of deltas`] : []),
      ...(unstamped > 0 ? [`${unstamped} streams with deltas that carry no stamp`] : [])
    ].join("; "),
    serverCpu: cpuBefore !== undefined && cpuAfter !== undefined
      ? ((cpuAfter.cpuMicros - cpuBefore.cpuMicros) / 1000 / wallMs) * 100
      : undefined,
    driverCpu: ((driverCpu.user + driverCpu.system) / 1000 / wallMs) * 100,
    memory: idle !== undefined && peaks !== undefined
      ? {
        idleRss,
        idleHeapUsed: idle.heapUsed,
        peakRss: peaks.peakRss,
        peakHeapUsed: peaks.peakHeapUsed,
        peakHeapTotal: peaks.peakHeapTotal
      }
      : undefined
  }
}

const describeLevel = (label: string, r: LevelResult) =>
  `  ${label}, ${`${r.layout} cores,`.padEnd(15)} ${String(r.streams).padStart(3)} streams${r.repeats > 1 ? ` ×${r.repeats}` : ""}: ` +
  (r.toBytes === undefined
    ? ""
    : `delta → bytes p50 ${ms2(percentile(r.toBytes, 0.5))} / p99 ${ms2(percentile(r.toBytes, 0.99))} ms, `) +
  `delivery p50 ${ms2(percentile(r.delivery, 0.5))} / p99 ${ms2(percentile(r.delivery, 0.99))} ms, ` +
  `gap − ${settings.delayMs} ms p50 ${ms2(percentile(r.gaps, 0.5))} / p99 ${ms2(percentile(r.gaps, 0.99))} ms ` +
  `(steady state p99 ${ms2(percentile(r.steadyGaps, 0.99))} ms over ${r.steadyGaps.length} gaps), ` +
  `first event p50 ${ms2(percentile(r.ttfe, 0.5))} / p99 ${ms2(percentile(r.ttfe, 0.99))} ms` +
  (r.memory === undefined ? "" : `, peak RSS ${mib(r.memory.peakRss)} MiB`) +
  (r.serverCpu === undefined ? "" : `, node CPU ${r.serverCpu.toFixed(0)} %`) +
  `, driver CPU ${r.driverCpu.toFixed(0)} %` +
  (r.failed > 0 ? `, ${r.failed} FAILED (${r.failureDetail})` : "")

/**
 * Every level in each layout of BENCH_CORES, on the same server process; the server and the driver are
 * back on shared cores afterwards, also when a run fails.
 */
const runLevels = async (target: Target, cores: Cores, measureNode: boolean): Promise<Array<LevelResult>> => {
  const results: Array<LevelResult> = []
  try {
    for (const wanted of settings.cores) {
      const layout = enterLayout(cores, wanted, target.child)
      // Separate cores that could not be set gave shared ones, which are measured once.
      if (results.some((r) => r.layout === layout)) continue
      for (const streams of settings.levels) {
        const result = await runLevel(target, layout, streams, streams === 1 ? settings.singleRepeats : 1, measureNode)
        log(describeLevel(target.label, result))
        results.push(result)
      }
    }
  } finally {
    enterLayout(cores, "shared", target.child)
  }
  return results
}

// ---------------------------------------------------------------------------
// Stopping
// ---------------------------------------------------------------------------

/** Starts `count` long turns and waits until every stream has its first delta. */
const startLongTurns = async (target: Target, count: number) => {
  const conversations = await createConversations(target, count)
  await warmSockets(target, count)
  const streams = conversations.map((id) => openStream(target, id, longText))
  try {
    await withDeadline(Promise.all(streams.map((s) => s.firstDelta)), settings.waitDeadlineMs, `${count} long turns starting`)
  } catch (error) {
    for (const s of streams) s.abort()
    throw error
  }
  return streams
}

interface StopResult {
  readonly answered: ReadonlyArray<number>
  readonly done: ReadonlyArray<number>
  readonly ended: ReadonlyArray<number>
}

const runStops = async (target: Target): Promise<StopResult> => {
  const streams = await startLongTurns(target, settings.stopTurns)
  const answered: Array<number> = []
  const done: Array<number> = []
  const ended: Array<number> = []
  for (const s of streams) {
    const sent = now()
    const body = await expectStatus(
      call(target, "POST", `/conversations/${s.conversationId}/stop`, { source: "api" }),
      200,
      "POST /conversations/{id}/stop"
    )
    answered.push(now() - sent)
    if (body.stopped !== true) throw new Error(`POST /conversations/{id}/stop answered ${JSON.stringify(body)}; expected stopped: true`)
    await awaitAll([s], settings.waitDeadlineMs, "a stopped stream ending")
    done.push((s.doneAt ?? Number.NaN) - sent)
    ended.push(s.endedAt! - sent)
  }
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} stopped streams did not end as "stopped": ${describeFailures(bad)}`)
  return { answered: sorted(answered), done: sorted(done), ended: sorted(ended) }
}

interface EmergencyRound {
  readonly turns: number
  readonly reported: unknown
  readonly answeredMs: number
  readonly lastDoneMs: number
  readonly lastEndMs: number
  readonly endedMs: ReadonlyArray<number>
}

const runEmergency = async (target: Target): Promise<EmergencyRound> => {
  const streams = await startLongTurns(target, settings.emergencyTurns)
  await sleep(200)
  const sent = now()
  const body = await expectStatus(call(target, "POST", "/stop"), 200, "POST /stop")
  const answeredMs = now() - sent
  await awaitAll(streams, settings.waitDeadlineMs, "streams ending after the emergency stop")
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} streams did not end as "stopped": ${describeFailures(bad)}`)
  const endedMs = sorted(streams.map((s) => s.endedAt! - sent))
  return {
    turns: Number(body?.stopped?.turns),
    reported: body?.stopped,
    answeredMs,
    lastDoneMs: Math.max(...streams.map((s) => s.doneAt! - sent)),
    lastEndMs: endedMs.at(-1)!,
    endedMs
  }
}

/**
 * Memory at rest: `count` long turns, every stream open between two deltas; RSS and heap after a
 * full collection, against the same readings with no turn running. Then an (untimed target)
 * emergency stop ends them.
 */
interface AtRest {
  readonly streams: number
  readonly idleRss: number
  readonly idleHeapUsed: number
  readonly rss: number
  readonly heapUsed: number
  readonly stopTurns: number
  readonly stopMs: number
}

const runAtRest = async (target: Target, count: number): Promise<AtRest> => {
  const idle = await askSample(target.child, true)
  const idleRss = readRss(target.child.process.pid!) ?? 0
  const streams = await startLongTurns(target, count)
  await sleep(500)
  const loaded = await askSample(target.child, true)
  const rss = readRss(target.child.process.pid!) ?? 0
  const sent = now()
  const body = await expectStatus(call(target, "POST", "/stop"), 200, "POST /stop")
  await awaitAll(streams, settings.waitDeadlineMs, "streams ending after the emergency stop")
  const bad = failures(streams, "stopped")
  if (bad.length > 0) throw new Error(`${bad.length} streams did not end as "stopped": ${describeFailures(bad)}`)
  return {
    streams: count,
    idleRss,
    idleHeapUsed: idle.heapUsed,
    rss,
    heapUsed: loaded.heapUsed,
    stopTurns: Number(body?.stopped?.turns),
    stopMs: Math.max(...streams.map((s) => s.endedAt! - sent))
  }
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

interface Results {
  readonly date: Date
  readonly load: { readonly before: number; readonly after: number }
  /** Cores used on average by other processes while the node was measured. */
  readonly otherCores: number
  readonly node: ReadonlyArray<LevelResult>
  readonly baseline: ReadonlyArray<LevelResult>
  /** Why the stream runs were not measured with separate cores, when they were not. */
  readonly separateSkipped: string | undefined
  readonly stops: StopResult
  readonly emergency: ReadonlyArray<EmergencyRound>
  readonly atRest: AtRest
  readonly peakRssOverall: number | undefined
  readonly connectionRetries: number
}


const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const verdict = (met: boolean) => (met ? "**met**" : "**not met**")

const streamsLabel = (r: LevelResult) => (r.repeats > 1 ? `${r.streams} (×${r.repeats} in sequence)` : String(r.streams))

/** The layout the delivery target is judged in: separate cores, unless they were not measured. */
const judgedLayout = (r: Results): Layout => (r.node.some((l) => l.layout === "separate") ? "separate" : "shared")

const inLayout = (levels: ReadonlyArray<LevelResult>, layout: Layout) => levels.filter((l) => l.layout === layout)

/** Delivery p99 of the run in `levels` with `layout` at the level of `like`, if there is one. */
const deliveryP99 = (levels: ReadonlyArray<LevelResult>, layout: Layout, like: LevelResult) => {
  const run = levels.find((l) => l.layout === layout && l.streams === like.streams && l.repeats === like.repeats)
  return run === undefined ? undefined : percentile(run.delivery, 0.99)
}

/** The shared-cores figures next to a target judged with separate cores, for reference. */
const sharedReference = (r: Results, l: LevelResult) => {
  const shared = r.node.find((n) => n.layout === "shared" && n.streams === l.streams && n.repeats === l.repeats)
  const floor = deliveryP99(r.baseline, "shared", l)
  return l.layout === "shared" || shared === undefined
    ? ""
    : `; shared cores: delta → bytes p99 ${ms2(percentile(shared.toBytes ?? [], 0.99))} ms, at the client p99 ` +
      `${ms2(percentile(shared.delivery, 0.99))} ms (floor ${ms2(floor ?? Number.NaN)} ms)`
}

const perStream = (l: LevelResult) => (l.memory === undefined ? Number.NaN : (l.memory.peakRss - l.memory.idleRss) / l.streams)

const targetsTable = (r: Results) => {
  const t = settings.targets
  const layout = judgedLayout(r)
  const memory = r.node.filter((l) => l.streams === t.memoryStreams)
  const stopP99 = percentile(r.stops.ended, 0.99)
  const worstEmergency = Math.max(...r.emergency.map((e) => e.lastEndMs))
  const emergencyCounts = r.emergency.every((e) => e.turns === settings.emergencyTurns)
  return table(
    ["Target", "Measured", "Verdict"],
    [
      ...inLayout(r.node, layout).map((l) => {
        const toBytes = l.toBytes ?? []
        return [
          `≤ ${t.addedPerDeltaP99Ms} ms p99 added per delta (the model's delta → its bytes written to the socket, ` +
          `inside the node), ${streamsLabel(l)} stream${l.streams === 1 ? "" : "s"}, ${layout} cores`,
          `p99 ${ms2(percentile(toBytes, 0.99))} ms (p50 ${ms2(percentile(toBytes, 0.5))} ms, ${int(toBytes.length)} deltas); ` +
          `at the client: p99 ${ms2(percentile(l.delivery, 0.99))} ms, floor (plain node:http) ` +
          `${ms2(deliveryP99(r.baseline, layout, l) ?? Number.NaN)} ms${sharedReference(r, l)}`,
          verdict(l.failed === 0 && toBytes.length === l.deltasReceived && percentile(toBytes, 0.99) <= t.addedPerDeltaP99Ms)
        ]
      }),
      [
        `${t.memoryStreams} concurrent streams in ≤ ${t.memoryMiB} MiB`,
        memory.length === 0
          ? "not measured"
          : memory.map((l) =>
            l.memory === undefined
              ? `not measured (${l.layout} cores)`
              : `peak RSS ${mib(l.memory.peakRss)} MiB with ${l.openMax} streams open at once (${l.layout} cores)`
          ).join("; "),
        verdict(
          memory.length > 0 && memory.every((l) =>
            l.memory !== undefined && l.failed === 0 && l.openMax >= t.memoryStreams &&
            l.memory.peakRss <= t.memoryMiB * 2 ** 20
          )
        )
      ],
      [
        `(for reference) ${r.atRest.streams} streams open at rest`,
        `RSS ${mib(r.atRest.rss)} MiB after a full GC`,
        r.atRest.rss <= t.memoryMiB * 2 ** 20 ? "within" : "over"
      ],
      [
        `stop to end of stream ≤ ${t.stopP99Ms} ms p99`,
        `p99 ${ms2(stopP99)} ms over ${r.stops.ended.length} stops`,
        verdict(stopP99 <= t.stopP99Ms)
      ],
      [
        `emergency stop of ${settings.emergencyTurns} turns ≤ ${t.emergencyMs} ms`,
        `${r.emergency.map((e) => ms2(e.lastEndMs)).join(", ")} ms (${r.emergency.length} rounds; worst counts)` +
        (emergencyCounts ? "" : `; the response counted ${r.emergency.map((e) => e.turns).join(", ")} turns`),
        verdict(emergencyCounts && worstEmergency <= t.emergencyMs)
      ]
    ]
  )
}

const streamsTable = (r: Results) =>
  table(
    [
      "Server",
      "Cores",
      "Streams",
      "Open at once (max)",
      "Wall time",
      "Deltas/s",
      "Delta → bytes in the node p50 / p99 (ms)",
      "Delivery at the client p50 / p99 (ms)",
      `Gap − ${settings.delayMs} ms p50 / p99 (ms)`,
      `Steady-state gap − ${settings.delayMs} ms p99 (ms)`,
      `Mean gap − ${settings.delayMs} ms (ms)`,
      "First event p50 / p99 (ms)",
      "Server CPU",
      "Driver CPU",
      "Failed"
    ],
    [...r.node.map((l) => ["node", l] as const), ...r.baseline.map((l) => ["plain node:http", l] as const)].map((
      [label, l]
    ) => [
      label,
      l.layout,
      streamsLabel(l),
      String(l.openMax),
      seconds(l.wallMs),
      int(l.deltasReceived / (l.wallMs / 1000)),
      l.toBytes === undefined ? "–" : `${ms2(percentile(l.toBytes, 0.5))} / ${ms2(percentile(l.toBytes, 0.99))}`,
      `${ms2(percentile(l.delivery, 0.5))} / ${ms2(percentile(l.delivery, 0.99))}`,
      `${ms2(percentile(l.gaps, 0.5))} / ${ms2(percentile(l.gaps, 0.99))}`,
      `${ms2(percentile(l.steadyGaps, 0.99))} (${int(l.steadyGaps.length)} of ${int(l.gaps.length)} gaps)`,
      ms2(l.meanGap),
      `${ms2(percentile(l.ttfe, 0.5))} / ${ms2(percentile(l.ttfe, 0.99))}`,
      l.serverCpu === undefined ? "–" : `${l.serverCpu.toFixed(0)} %`,
      `${l.driverCpu.toFixed(0)} %`,
      l.failed === 0 ? "0" : `${l.failed} (${l.failureDetail})`
    ])
  )

const memoryTable = (r: Results) =>
  table(
    ["Streams", "Idle RSS (MiB)", "Peak RSS (MiB)", "Per stream (KiB)", "Idle heap used (MiB)", "Peak heap used / total (MiB)"],
    inLayout(r.node, judgedLayout(r)).flatMap((l) =>
      l.memory === undefined ? [] : [[
        streamsLabel(l),
        mib(l.memory.idleRss),
        mib(l.memory.peakRss),
        l.streams === 1 ? "–" : (perStream(l) / 1024).toFixed(0),
        mib(l.memory.idleHeapUsed),
        `${mib(l.memory.peakHeapUsed)} / ${mib(l.memory.peakHeapTotal)}`
      ]]
    )
  )

const atRestTable = (r: Results) => {
  const a = r.atRest
  return table(
    ["State", "Streams open", "RSS (MiB)", "Heap used after a full GC (MiB)", "Per stream: RSS / heap (KiB)"],
    [
      ["no turn running", "0", mib(a.idleRss), mib(a.idleHeapUsed), "–"],
      [
        `${a.streams} long turns, between two deltas`,
        String(a.streams),
        mib(a.rss),
        mib(a.heapUsed),
        `${((a.rss - a.idleRss) / a.streams / 1024).toFixed(0)} / ${((a.heapUsed - a.idleHeapUsed) / a.streams / 1024).toFixed(0)}`
      ]
    ]
  )
}

const stopTable = (r: Results) =>
  table(
    ["From POST /conversations/{id}/stop sent to", "p50 (ms)", "p99 (ms)", "max (ms)"],
    [
      ["its response (200, stopped: true)", r.stops.answered],
      ["the stream's `done` event", r.stops.done],
      ["the stream's end (response closed)", r.stops.ended]
    ].map(([label, values]) => [
      label as string,
      ms2(percentile(values as Array<number>, 0.5)),
      ms2(percentile(values as Array<number>, 0.99)),
      ms2((values as Array<number>).at(-1) ?? Number.NaN)
    ])
  )

const emergencyTable = (r: Results) =>
  table(
    ["Round", "stopped.turns", "POST /stop answered (ms)", "Half the streams ended (ms)", "Last `done` (ms)", "All streams ended (ms)", `≤ ${settings.targets.emergencyMs} ms`],
    r.emergency.map((e, i) => [
      String(i + 1),
      String(e.turns),
      ms2(e.answeredMs),
      ms2(percentile(e.endedMs, 0.5)),
      ms2(e.lastDoneMs),
      ms2(e.lastEndMs),
      verdict(e.turns === settings.emergencyTurns && e.lastEndMs <= settings.targets.emergencyMs)
    ])
  )

/** Other processes took more than a quarter of a core on average: the figures understate the code. */
const busyWarning = (r: Results) =>
  r.otherCores > otherWorkLimit
    ? ` **Other work was running on the machine during the measurements: these figures understate what the code can do; rerun on an idle machine before comparing.**`
    : ""

/** "with separate cores and then with shared cores": the layouts of `levels`, in the order they ran. */
const layoutsRun = (levels: ReadonlyArray<LevelResult>) =>
  [...new Set(levels.map((l) => l.layout))].map((layout) => `with ${layout} cores`).join(" and then ")

/** A layout missing from this run, and what the target is judged on then. */
const missingLayout = (r: Results) =>
  r.separateSkipped !== undefined
    ? ` **Separate cores were not measured in this run (${r.separateSkipped}), so the target is judged on shared cores, the wait for the node's CPU included.**`
    : r.node.some((l) => l.layout === "shared")
    ? ""
    : ` Shared cores were not measured in this run (BENCH_CORES=separate).`

const renderSection = (r: Results) => {
  const cpus = os.cpus()
  const judged = judgedLayout(r)
  return `## Local node: SSE streams and stopping

Written by \`npm run bench:node\` (scripts/bench/node.ts) on ${r.date.toISOString().slice(0, 16).replace("T", " ")} UTC.

- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}; Node ${process.version}. The node, the reference server and the driver (the HTTP client) run on these cores, placed as under Cores.
- System load: the 1-minute load average was ${r.load.before.toFixed(1)} when the measurements started (the build just before counts in it) and ${r.load.after.toFixed(1)} when the node's part ended, on ${cpus.length} cores; processes other than the node and the driver used ${r.otherCores.toFixed(2)} cores on average during the node's part (the machine's CPU time minus theirs).${busyWarning(r)}
- Node: the compiled product, \`node bin/clark.js node serve --model scripted:<script>\` on a fresh data dir (SQLite in WAL mode on the temporary directory's disk), default settings and logging, with a preload that reports its heap and CPU time over IPC every 100 ms (\`--import\`, \`--expose-gc\` for a full collection before each idle reading). RSS is VmRSS from /proc every 100 ms.
- Order, on one node process: a warm-up of ${settings.warmupStreams} streams, memory at rest, the stream runs (${settings.levels.join(", ")}) ${layoutsRun(r.node)}, the stops, the emergency stops; then, on one reference process, a warm-up of ${settings.warmupStreams} streams and the stream runs ${layoutsRun(r.baseline)}.
- Cores: the stream runs are measured in two layouts on the same process, set between runs with \`taskset -a -p -c\` (every thread of a process): separate cores, the server under test on CPU ${separateCpus.server} and the driver on CPU ${separateCpus.driver}; shared cores, both free to run on any of the ${cpus.length} CPUs, placed by the kernel. They differ because Linux wakes a socket's reader on the CPU of its writer (a sync wake-up): with shared cores, when the node goes on with CPU work right after writing a delta, the driver reads that delta only once the node yields the CPU. Measured on this machine with shared cores: the single stream's slowest deltas were the last of their stream, the node finishing its turn (about 2 ms of SQLite and bookkeeping) right after writing it. In production the host app (the client) runs on cores of its own on a multi-core machine, so the target is judged with separate cores, which show what the node adds per delta; the shared-core figures are kept for reference, as what a client on the node's cores sees. With separate cores the node has one CPU for all its threads, so where it is busy, e.g. starting hundreds of streams at once, its gaps and times to first event are longer than with shared cores. The warm-ups, memory at rest, the stops and the emergency stops run on shared cores.${missingLayout(r)}
- Script: streamed turns write ${settings.deltas} deltas ${settings.delayMs} ms apart (the first at once), each delta's text the model's \`process.hrtime.bigint()\` when it produced it (the script step \`{"stamp": true}\`); long turns write one delta and then wait ${settings.longDelayMs / 1000} s, so only a stop ends them.
- Driver: \`node:http\` with a keep-alive agent of up to 600 sockets, opened (GET /health) before each run so streams do not pay for connecting; every stream in its own conversation, all streams of a run sent at once. Timestamps are taken when a chunk reaches the driver's \`data\` handler, so the driver's own delays are in the figures (its CPU is in the table). Requests on a keep-alive socket the server had just closed are sent again once (${r.connectionRetries} this run).
- Delta → bytes (the "added per delta" target, the issue's "delta-to-bytes latency"): inside the node, for every delta, the end of the socket write that handed its bytes to the kernel minus the stamp in the delta (the preload wraps \`net.Socket\`'s \`_write\` and \`_writev\`, which run once any cork is lifted, and reads the stamps out of the bytes written; the wrapper's own scan is counted against the node). This is what the node adds between the model handing over a delta and its bytes leaving: the turn engine, publishing the event, SSE framing, the HTTP chunk and the write. The target is judged on its p99 with ${judged} cores, over every delta of the run (the count must match the deltas the driver received).
- Delivery at the client: for every delta, the driver's \`process.hrtime.bigint()\` when its chunk arrived minus the stamp. Both read CLOCK_MONOTONIC, which the processes of one machine share, so this is the delta-to-bytes path plus the kernel's loopback and the driver being scheduled and reading it, which on this 2-CPU virtual machine costs the odd millisecond whatever the server (see Cores). "plain node:http" is a reference server in a child process that writes the same kind of stamped deltas on the same timers with nothing else (stamped at the write): its delivery in the same layout is the floor of this machine and this driver.
- Gap: two consecutive deltas of a stream at the driver minus the scripted ${settings.delayMs} ms, over all gaps of all streams; the mean per stream ((last − first − ${settings.deltas - 1} × ${settings.delayMs} ms) / ${settings.deltas - 1}) is shown too. Besides the delivery path, a gap contains the lateness of the model's own timer when the node's event loop is busy, above all with the start-up of the other streams of the run (each one's request, turn and first delta), so it overstates what the node adds per delta. Hence the time to first event (from the request sent to the first \`delta\` event), which shows how long that start-up lasts, and the steady-state gap: only the gaps whose two deltas both arrived after every stream of the run (each of the ${settings.singleRepeats} sequential runs for the single stream) had its first delta.

### Targets

${targetsTable(r)}

### Concurrent streams

${streamsTable(r)}

### Memory of the node

From the stream runs with ${judged} cores. "Per stream" is (peak RSS − idle RSS) / streams, the idle reading taken after a full collection just before the run${r.peakRssOverall === undefined ? "" : `; the node's high-water RSS (VmHWM) over the whole benchmark was ${mib(r.peakRssOverall)} MiB`}.

${memoryTable(r)}

At rest: ${r.atRest.streams} long turns, every stream open and waiting for its next delta, read after a full collection (the emergency stop that then ended them took ${ms2(r.atRest.stopMs)} ms for ${r.atRest.stopTurns} turns, not a target).

${atRestTable(r)}

### Stop

${settings.stopTurns} long turns running, each with its stream open; then, one conversation at a time, POST /conversations/{id}/stop and wait for that stream to end (${settings.stopTurns - 1} to 0 other turns still running).

${stopTable(r)}

### Emergency stop

${settings.emergencyTurns} long turns running (every stream has its first delta), then POST /stop, timed until all ${settings.emergencyTurns} streams have ended with \`done\` (resolution \`stopped\`); ${r.emergency.length} rounds, new conversations each round.

${emergencyTable(r)}
`
}


// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------


const startNode = async (tmp: string): Promise<Target> => {
  const dataDir = path.join(tmp, "data")
  const scriptFile = path.join(tmp, "script.json")
  const preloadFile = path.join(tmp, "preload.mjs")
  fs.writeFileSync(scriptFile, JSON.stringify(script, null, 2))
  fs.writeFileSync(preloadFile, preloadSource)
  const port = await freePort()
  const child = startNodeChild(
    [
      ...settings.nodeFlags,
      "--expose-gc",
      "--import",
      pathToFileURL(preloadFile).href,
      "bin/clark.js",
      "node",
      "serve",
      "--data-dir",
      dataDir,
      "--port",
      String(port),
      "--model",
      `scripted:${scriptFile}`
    ],
    { CC_APP_SECRET: randomBytes(24).toString("base64url") }
  )
  const started = Date.now()
  await waitHealthy({ label: "node", port, token: "", child })
  const token = String(JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken)
  log(`  node healthy on port ${port} after ${seconds(Date.now() - started)} (pid ${child.process.pid})`)
  return { label: "node", port, token, child }
}

const startBaseline = async (): Promise<Target> => {
  const port = await freePort()
  const child = startChild("plain node:http", ["-e", baselineSource, String(settings.deltas), String(settings.delayMs), String(port)])
  const target = { label: "plain node:http", port, token: "", child }
  await waitHealthy(target)
  return target
}

const main = async () => {
  const startedAt = Date.now()
  log(
    `Node benchmark: streams of ${settings.deltas} deltas ${settings.delayMs} ms apart at ${settings.levels.join(", ")} concurrent streams; ` +
      `${settings.stopTurns} stops; emergency stop of ${settings.emergencyTurns} turns ×${settings.emergencyRounds}`
  )
  const cores = probeCores()
  log(
    cores.separateSkipped === undefined
      ? `Core layouts: ${settings.cores.join(", ")} (separate: server on CPU ${separateCpus.server}, driver on CPU ${separateCpus.driver}; shared: both on CPUs ${cores.shared})`
      : `Core layouts: shared only; separate cores skipped: ${cores.separateSkipped}`
  )
  build("node")
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-node-"))
  tmpDirs.add(tmp)
  try {
    const loadBefore = os.loadavg()[0] ?? 0
    log("Starting the node")
    const node = await startNode(tmp)
    const window = {
      wall: now(),
      machine: machineBusyMs(),
      node: (await askSample(node.child, false)).cpuMicros,
      driver: process.cpuUsage()
    }

    log(`Warm-up: ${settings.warmupStreams} streams`)
    const warm = await runLevel(node, "shared", settings.warmupStreams, 1, true)
    if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} streams failed (${warm.failureDetail})`)

    log(`Memory at rest: ${settings.targets.memoryStreams} long turns`)
    const atRest = await runAtRest(node, settings.targets.memoryStreams)
    log(
      `  RSS ${mib(atRest.idleRss)} → ${mib(atRest.rss)} MiB, heap used ${mib(atRest.idleHeapUsed)} → ${mib(atRest.heapUsed)} MiB; ` +
        `emergency stop of ${atRest.stopTurns} turns: streams ended after ${ms2(atRest.stopMs)} ms`
    )

    log("Concurrent streams")
    const nodeLevels = await runLevels(node, cores, true)

    log(`Stop: ${settings.stopTurns} long turns, stopped one at a time`)
    const stops = await runStops(node)
    log(
      `  stop to end of stream p50 ${ms2(percentile(stops.ended, 0.5))} / p99 ${ms2(percentile(stops.ended, 0.99))} ms ` +
        `(response p50 ${ms2(percentile(stops.answered, 0.5))} ms)`
    )

    log(`Emergency stop: ${settings.emergencyTurns} long turns, ${settings.emergencyRounds} rounds`)
    const emergency: Array<EmergencyRound> = []
    for (let round = 0; round < settings.emergencyRounds; round++) {
      const result = await runEmergency(node)
      log(
        `  round ${round + 1}: stopped ${JSON.stringify(result.reported)}; answered after ${ms2(result.answeredMs)} ms, ` +
          `all ${settings.emergencyTurns} streams ended after ${ms2(result.lastEndMs)} ms`
      )
      emergency.push(result)
    }
    const peakRssOverall = readHwm(node.child.process.pid!)
    const loadAfter = os.loadavg()[0] ?? 0
    const nodeCpuMs = ((await askSample(node.child, false)).cpuMicros - window.node) / 1000
    const driverCpu = process.cpuUsage(window.driver)
    const otherCores = Math.max(
      0,
      (machineBusyMs() - window.machine - nodeCpuMs - (driverCpu.user + driverCpu.system) / 1000) / (now() - window.wall)
    )
    log(`  other processes used ${otherCores.toFixed(2)} cores on average during the node's part`)
    if (otherCores > otherWorkLimit) log("  warning: other work was running; the figures understate what the code can do")
    await stopChild(node.child)

    log("Reference: plain node:http, same bytes, same timers")
    const baseline = await startBaseline()
    await warmSockets(baseline, settings.warmupStreams)
    await runLevel(baseline, "shared", settings.warmupStreams, 1, false)
    const baselineLevels = await runLevels(baseline, cores, false)
    await stopChild(baseline.child)

    const section = renderSection({
      date: new Date(),
      load: { before: loadBefore, after: loadAfter },
      otherCores,
      node: nodeLevels,
      baseline: baselineLevels,
      separateSkipped: cores.separateSkipped,
      stops,
      emergency,
      atRest,
      peakRssOverall,
      connectionRetries
    })
    log(`\n${section}`)
    if (settings.nodeFlags.length > 0) {
      log(`Not written to docs/benchmarks.md: the node ran with ${settings.nodeFlags.join(" ")} (benchmark took ${seconds(Date.now() - startedAt)})`)
    } else {
      log(`Written to ${writeDocs("node", section)} (benchmark took ${seconds(Date.now() - startedAt)})`)
    }
  } finally {
    streamAgent.destroy()
    controlAgent.destroy()
    await stopAll()
    fs.rmSync(tmp, { recursive: true, force: true })
    tmpDirs.delete(tmp)
  }
}

const tmpDirs = new Set<string>()

// Ctrl-C or a kill: the child servers and the temporary data go too.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
    for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  })
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nBenchmark failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
