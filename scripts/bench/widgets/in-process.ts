/**
 * `BENCH_WIDGETS_IN_PROCESS=1 npm run bench:widgets`: the reference, not the judged figure. The method bench:widgets
 * used until 2026-11-27: the node built in this process from its layers (tsx, no bundle, without the product's V8
 * setting of bin/v8-tuning.js), pressed from this same process, so the client's CPU and its scheduling land inside
 * the node's figure. Kept for comparison with older figures and for profiling the press with the node's sources
 * (`--cpu-prof`, the heap sampling below, the statement count); it prints and writes nothing to the docs.
 * The judged figure is scripts/bench/widgets.ts's: the compiled node in a child process, the client in another.
 *
 * What the node adds to a widget's `done` press of a read binding beside the tool call itself, in one process,
 * the variants interleaved call by call (which goes first turns with the round) so the machine's load hits them alike.
 *
 * The node is built in-process from its own layers (as bench:tools does), the probe service package with its
 * widget (test/node/widgets/Fixtures.ts) installed through the node's routes and placed by a scripted turn.
 *
 *   1. the tool call itself: the SDK `Client` over stdio calling `read_value` on a process of the same copy;
 *   2. the node's tool path alone: `PackageTools.call` of the same tool (what a turn's call costs);
 *   3. the press: POST /conversations/{id}/widgets/{instanceId}/actions over HTTP (node:http from this process, person headers),
 *      each with a new invocation id at the instance's current revision, answered 200 `done`.
 *
 * Each variant's CPU per call (process.cpuUsage around each call; the variants run one at a time) is printed beside
 * its wall times: on a shared machine the comparable figure.
 *
 * Target: the press's p99 at most 3 ms above the tool call's. A binding allows at most 600 presses a minute, so
 * presses turn over several placed instances. Defaults: 1,000 rounds after 100 unmeasured (BENCH_WIDGETS_N,
 * BENCH_FULL=1 for 5,000). BENCH_WIDGETS_ONLY=press runs only this node's press (to profile it:
 * `BENCH_WIDGETS_IN_PROCESS=1 node --cpu-prof --import tsx scripts/bench/widgets.ts`, or `--trace-gc-nvp` for its
 * scavenges); `direct`, `path` and `baseline` run only that variant the same way.
 * BENCH_WIDGETS_HEAP=<file> samples the heap over the measured rounds (see `heapProfile` below).
 *
 * BENCH_BASELINE_REF=<commit> ("before") checks that commit out in a temporary git worktree (node_modules linked,
 * removed at the end) and loads its node's modules through tsx into this process: a second node, its own module
 * graph, data dir and port, whose press is a fourth variant interleaved with the others, so before and after are
 * measured in the same run under the same load.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as inspector from "node:inspector"
import * as os from "node:os"
import * as path from "node:path"
import { createRequire } from "node:module"
import { type CallContext, PackageTools } from "../../../services/node/PackageTools.js"
import { pressOf, script, widgetProbe } from "../../../test/node/widgets/Fixtures.js"
import { log, otherWorkCores, percentile, positiveInt } from "../Common.js"
import { checkoutBaseline, removeBaseline } from "../node/builds.js"
import { personHeaders, serveInProcess } from "../tools/node.js"
import { currentModules, loadModules, type NodeModules } from "../node/modules.js"

const full = process.env.BENCH_FULL === "1"
const n = positiveInt("BENCH_WIDGETS_N", full ? 5_000 : 1_000)
const warmup = 100
/** BENCH_WIDGETS_ONLY=direct, path, press or baseline: only that variant runs (to profile it); nothing is written to the docs. */
const only = ["direct", "path", "press", "baseline"].indexOf(process.env.BENCH_WIDGETS_ONLY ?? "")
const pressOnly = only !== -1
const perInstance = 500

interface Figures {
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** This process's CPU (user + system, every thread) per call, ms: the client's, the node's and the SDK's side. */
  readonly cpu: number
}

/**
 * Statements the SQLite driver runs, counted while `counting` is set: better-sqlite3's Statement methods wrapped
 * once (both nodes load the same driver), so a press's statements can be counted on each node in turn.
 */
const Database = createRequire(import.meta.url)("better-sqlite3") as new(file: string) => {
  prepare(sql: string): object
  close(): void
}
let counting = false
let statements = 0
const countStatements = () => {
  const probe = new Database(":memory:")
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, (...args: Array<unknown>) => unknown>
  probe.close()
  for (const method of ["run", "all", "get", "iterate"]) {
    const original = proto[method]!
    proto[method] = function(this: unknown, ...args: Array<unknown>) {
      if (counting) statements++
      return original.apply(this, args)
    }
  }
}

/** Statements per press over `presses` presses of `press`. */
const statementsPer = <E, R>(press: Effect.Effect<unknown, E, R>, presses: number) =>
  Effect.gen(function*() {
    statements = 0
    counting = true
    for (let i = 0; i < presses; i++) yield* press
    counting = false
    return statements / presses
  })

const counted = 50

/**
 * BENCH_WIDGETS_HEAP=<file>: V8's sampling heap profiler over the measured rounds, keeping only the sampled objects
 * still alive at the end (collected ones left out): what the loop's allocations leave behind, which is what a
 * scavenge has to copy. Written as a .heapprofile (Chrome DevTools' Memory tab reads it).
 */
const heapProfile = process.env.BENCH_WIDGETS_HEAP
const post = (session: inspector.Session, method: string, params?: object) =>
  Effect.async<any, Error>((resume) =>
    session.post(method, params ?? {}, (error, result) => resume(error ? Effect.fail(error) : Effect.succeed(result)))
  ).pipe(Effect.orDie)
const startSampling = (session: inspector.Session) =>
  Effect.suspend(() => {
    session.connect()
    // BENCH_WIDGETS_HEAP_OLD=1: also objects a full collection took, i.e. every object that outlived a scavenge.
    return post(session, "HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: process.env.BENCH_WIDGETS_HEAP_OLD === "1"
    })
  })
const stopSampling = (session: inspector.Session, file: string) =>
  Effect.map(Effect.zipRight(
    // BENCH_WIDGETS_HEAP_GC=1: a full collection first, so only what is still reachable is left in the profile.
    process.env.BENCH_WIDGETS_HEAP_GC === "1" ? post(session, "HeapProfiler.collectGarbage") : Effect.void,
    post(session, "HeapProfiler.stopSampling")
  ), (result) => {
    fs.writeFileSync(file, JSON.stringify(result.profile))
    session.disconnect()
  })

const figures = (samples: ReadonlyArray<Sample>): Figures => {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b)
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    cpu: samples.reduce((sum, s) => sum + s.cpu, 0) / samples.length
  }
}

interface Sample {
  readonly ms: number
  readonly cpu: number
}

/** Wall time and this process's CPU of one call (the variants run one at a time, so the CPU is the call's). */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Sample, E, R> =>
  Effect.suspend(() => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    return Effect.map(effect, () => {
      const ms = performance.now() - started
      const used = process.cpuUsage(cpu)
      return { ms, cpu: (used.user + used.system) / 1000 }
    })
  })

const headers = (token: string) => ({ ...personHeaders(token), "content-type": "application/json" })

/**
 * The client: node:http over one kept-alive connection per node. `fetch` (undici) cost the benchmark's own process
 * about 0.7 ms more CPU per request than this on the loaded host (a GET /node: 1.5 against 0.8 ms), time that is the
 * client's, not the node's; both nodes are driven through the same client.
 */
const json = (baseUrl: string, token: string, method: string, route: string, body?: unknown) => {
  const url = new URL(baseUrl)
  const agent = agents.get(baseUrl) ?? agents.set(baseUrl, new http.Agent({ keepAlive: true, maxSockets: 1 })).get(baseUrl)!
  return Effect.async<{ readonly status: number; readonly body: any }, Error>((resume) => {
    const data = body === undefined ? undefined : JSON.stringify(body)
    const request = http.request({
      host: url.hostname,
      port: url.port,
      method,
      path: route,
      agent,
      headers: { ...headers(token), ...(data === undefined ? {} : { "content-length": Buffer.byteLength(data) }) }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", (error) => resume(Effect.fail(error)))
      response.on("end", () =>
        resume(Effect.try({
          try: () => ({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
          catch: (error) => error as Error
        })))
    })
    request.on("error", (error) => resume(Effect.fail(error)))
    request.end(data)
  }).pipe(Effect.orDie)
}

const agents = new Map<string, http.Agent>()

/** A node built from `modules` on a fresh data dir, the probe installed and `count` widgets placed by turns. */
const startNode = (modules: NodeModules, folder: string, count: number) =>
  Effect.gen(function*() {
    const { baseUrl, context, token } = yield* serveInProcess(modules, script, "clark-bench-widgets-")
    const call = (method: string, route: string, body?: unknown) => json(baseUrl, token, method, route, body)

    const listing = yield* call("POST", "/packages/local", { path: folder })
    const installed = yield* call("POST", "/packages/install", { packageId: listing.body.packageId, localDigest: listing.body.contentDigest })
    if (installed.status === 202) {
      const approval = yield* call("GET", `/packages/approvals/${installed.body.approvalId}`)
      yield* call("POST", `/packages/approvals/${installed.body.approvalId}/decision`, {
        decision: "granted",
        digest: approval.body.operationDigest
      })
    }
    const conversationId = (yield* call("POST", "/conversations", {})).body.conversationId as string
    const instances: Array<{ placed: any; revision: number }> = []
    for (let i = 0; i < count; i++) {
      const turn = yield* call("POST", `/conversations/${conversationId}/messages`, { text: "place probe" })
      const reply = turn.body.timeline.entries.find((e: any) => e.role === "assistant")
      const placed = reply.blocks.find((b: any) => b.name === "place_widget").output
      instances.push({ placed, revision: placed.revision })
    }
    let pressed = 0
    /** A `done` press of the read binding, turning over the placed instances. */
    const press = (input: unknown) =>
      Effect.suspend(() => {
        const target = instances[pressed % instances.length]!
        const payload = pressOf(target.placed, "read", input, `bench-${pressed++}`, target.revision)
        return Effect.flatMap(call("POST", `/conversations/${conversationId}/widgets/${target.placed.instanceId}/actions`, payload), (answer) => {
          if (answer.status !== 200 || answer.body.outcome !== "done") {
            return Effect.dieMessage(`the press answered ${answer.status}: ${JSON.stringify(answer.body)}`)
          }
          target.revision = answer.body.revision
          return Effect.void
        })
      })
    return { context, conversationId, press, instances: instances.length }
  })

interface Results {
  readonly toolCall: Figures
  readonly toolPath: Figures
  readonly press: Figures
  readonly baselinePress: Figures | undefined
  readonly instances: number
  readonly statements: number
  readonly baselineStatements: number | undefined
}

const run = (baseline: NodeModules | undefined) => Effect.scoped(Effect.gen(function*() {
  const folder = widgetProbe({ readPerMinute: 600 })
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(path.dirname(folder), { recursive: true, force: true })))
  const count = Math.ceil((n + warmup + counted) / perInstance)
  const current = yield* startNode(currentModules, folder, count)
  const before = baseline === undefined ? undefined : yield* startNode(baseline, folder, count)

  const input = { key: "colour" }
  const direct = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(folder, "server.mjs")], cwd: folder })
      const client = new Client({ name: "bench-direct", version: "1.0.0" }, { capabilities: {} })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )
  const tools = Context.get(current.context, PackageTools)
  const callContext: CallContext = { taskId: "task_bench", conversationId: current.conversationId, origin: "person", channel: "text" }
  const variants = [
    timed(Effect.promise(() => direct.callTool({ name: "read_value", arguments: input }))),
    timed(Effect.flatMap(tools.call(callContext, "probe-service__read_value", input), (outcome) =>
      outcome.status === "done" ? Effect.void : Effect.dieMessage(JSON.stringify(outcome.output)))),
    timed(current.press(input)),
    ...(before === undefined ? [] : [timed(before.press(input))])
  ]
  countStatements()
  const perPress = yield* statementsPer(current.press(input), counted)
  const baselinePerPress = before === undefined ? undefined : yield* statementsPer(before.press(input), counted)
  log(`${n} rounds of ${variants.length} variants, after ${warmup} unmeasured`)
  const samples = variants.map(() => [] as Array<Sample>)
  const sampling = heapProfile === undefined ? undefined : new inspector.Session()
  for (let round = 0; round < warmup + n; round++) {
    if (round === warmup && sampling !== undefined) yield* startSampling(sampling)
    for (let k = 0; k < variants.length; k++) {
      const i = (round + k) % variants.length
      if (pressOnly && i !== only) continue
      const sample = yield* variants[i]!
      if (round >= warmup) samples[i]!.push(sample)
    }
  }
  if (sampling !== undefined) yield* stopSampling(sampling, heapProfile!)
  const [toolCall, toolPath, pressFigures, baselinePress] = samples.map(figures)
  return {
    toolCall: toolCall!,
    toolPath: toolPath!,
    press: pressFigures!,
    baselinePress,
    instances: current.instances,
    statements: perPress,
    baselineStatements: baselinePerPress
  } satisfies Results
}))

const ms = (value: number) => value.toFixed(2)

const row = (label: string, f: Figures) => `| ${label} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.max)} | ${ms(f.cpu)} |`

const main = async () => {
  const baselineRef = process.env.BENCH_BASELINE_REF
  const baseline = baselineRef === undefined || baselineRef === "none" ? undefined : checkoutBaseline(baselineRef)
  try {
    const otherWork = await otherWorkCores()
    const load = os.loadavg().map((value) => value.toFixed(2)).join(", ")
    const results = await Effect.runPromise(run(baseline === undefined ? undefined : await loadModules(baseline.dir)))
    const added = (press: Figures) => `${ms(press.p50 - results.toolCall.p50)} ms p50 and ${ms(press.p99 - results.toolCall.p99)} ms p99`
    const section = [
      "## Local node: widget presses, in-process reference (not the judged figure)",
      "",
      `\`npm run bench:widgets\`, ${new Date().toISOString().slice(0, 10)}: ${n} rounds after ${warmup} unmeasured, the variants interleaved call by call${baseline === undefined ? "" : `, the baseline ${baselineRef} (${baseline.commit}, "${baseline.subject}") loaded from a temporary worktree into the same process as a second node`}; load average ${load}, other work on ${otherWork.toFixed(2)} cores${otherWork > 0.5 ? " (a loaded machine: other helpers were running)" : ""}.`,
      "",
      "| variant | p50 ms | p99 ms | max ms | CPU ms per call |",
      "| --- | ---: | ---: | ---: | ---: |",
      row("the tool call itself (SDK client → probe `read_value`)", results.toolCall),
      row("the node's tool path (`PackageTools.call`)", results.toolPath),
      row("a `done` press of the read binding over HTTP", results.press),
      ...(results.baselinePress === undefined ? [] : [row(`the same press on the baseline ${baseline!.commit}`, results.baselinePress)]),
      "",
      `The press adds ${added(results.press)} to the tool call (target: at most 3 ms p99)${results.baselinePress === undefined ? "" : `; on the baseline ${added(results.baselinePress)}`}: the HTTP round trip, the checks of the instance, the claim of the invocation id (its own commit, before the call), then the timeline row, the revision, the stored answer and the audit rows (the call's and the press's, one INSERT) in one transaction. SQL statements per press (counted at the driver over ${counted} presses, the tool call's audit row included): ${results.statements.toFixed(1)}${results.baselineStatements === undefined ? "" : ` (baseline ${results.baselineStatements.toFixed(1)})`}. The CPU column is this process's CPU (user + system, all threads) per call: the client's, the node's and the SDK client's share, not the probe service's (a child process). Presses turned over ${results.instances} placed instances per node (600 presses a minute per binding at most); the client is node:http over one kept-alive connection per node. BENCH_BASELINE_REF=<commit> adds the press of that commit's node, measured beside this one.`,
      ""
    ].join("\n")
    console.log(`\n${section}`)
  } finally {
    removeBaseline()
  }
}

main().then(
  () => process.exit(),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
