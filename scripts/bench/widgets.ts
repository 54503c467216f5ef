/**
 * `npm run bench:widgets`: what the node adds to a widget's `done` press of a read binding beyond the tool call
 * itself (issue 15, point 10: at most 3 ms p99), measured on the product as it runs, in one run, the variants
 * interleaved call by call (which goes first turns with the round) so the machine's load hits them alike.
 *
 *   - The node: this checkout compiled (`npm run build`, as bench:node) and started as a child process,
 *     `node bin/clark.js node serve --model scripted:<script> --data-dir … --port …`: the bundle, with the product's
 *     V8 settings (bin/v8-tuning.js), on a fresh data dir.
 *   - The client: another process (scripts/bench/widgets/driver.ts), as the app is; node:http over one kept-alive
 *     connection per node, bodies made once. It installs the probe service package with its widget
 *     (test/node/widgets/Fixtures.ts `widgetProbe`) through the node's routes and places the widgets by scripted
 *     turns (Fixtures.ts `script`), then times each call from its request to the response's last byte.
 *   - The variants: the tool call itself (the SDK `Client` over stdio calling `read_value` on a process of the same
 *     package copy, started by the client) and the press, POST /conversations/{id}/widgets/{instanceId}/actions,
 *     each with a new invocation id at the instance's current revision, answered 200 `done`. A binding allows at
 *     most 600 presses a minute, so presses turn over several placed instances (500 presses each at most).
 *   - Cores (BENCH_WIDGETS_CORES, default `separate` as bench:node's stream runs): the nodes on CPU 0 (their probe
 *     processes, started after the pinning, with them), the client on CPU 1 (its probe process with it); `shared`
 *     pins nothing.
 *   - CPU: the client's per call (process.cpuUsage around each call) and each node's own per press (its
 *     /proc/<pid>/stat over the measured rounds, all its threads; not its probe process's, the tool call's own).
 *
 * The judged figure: press p50/p99 − tool call p50/p99, on the compiled node. BENCH_BASELINE_REF=<commit> ("before")
 * checks that commit out in a temporary git worktree, builds it there with its own build and starts its node the
 * same way: a second node pressed by the same client, interleaved with this checkout's, in the same run.
 *
 * Defaults: 1,000 rounds (BENCH_WIDGETS_N; BENCH_FULL=1 for 5,000) after 1,000 unmeasured (BENCH_WIDGETS_WARMUP),
 * under a minute with the build, two with a baseline's. BENCH_WIDGETS_DOCS=0 prints without writing the section of
 * docs/benchmarks.md; BENCH_WIDGETS_DUMP=<file> writes every call's wall time per variant, in round order (JSON);
 * BENCH_WIDGETS_TAIL=1 also prints each variant's 15 slowest calls with their rounds (a stall
 * the variants share is the machine's). BENCH_WIDGETS_IN_PROCESS=1
 * runs instead the reference kept from the earlier method (scripts/bench/widgets/in-process.ts: node and client in
 * one process, from the sources; the tool path alone, statement counts, profiling), which writes no docs.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Child, startChild, stopAll, stopChild } from "./Children.js"
import { freePort, log, machineBusyMs, otherWorkCores, otherWorkLimit, percentile, positiveInt, root, seconds, writeDocs } from "./Common.js"
import { script, widgetProbe } from "../../test/node/widgets/Fixtures.js"
import { type Build, buildCurrent, bundleForBench, checkoutBaseline, cleanUpOnExit, compilers, removeBaseline } from "./node/builds.js"
import { waitHealthy } from "./node/client.js"
import { pin, separateCpus } from "./node/cores.js"
import { procCpuMs } from "./node/probe.js"
import { type DriverMessage, type DriverReply, type Samples, toolVariant } from "./widgets/driver.js"

const full = process.env.BENCH_FULL === "1"
const n = positiveInt("BENCH_WIDGETS_N", full ? 5_000 : 1_000)
/** Unmeasured rounds first: after 100 the compiled node still optimised (p50 and CPU per press 0.3 ms higher). */
const warmup = positiveInt("BENCH_WIDGETS_WARMUP", 1_000)
const perInstance = 500
const baselineRef = (() => {
  const raw = (process.env.BENCH_BASELINE_REF ?? "").trim()
  if (raw.startsWith("-")) throw new Error(`BENCH_BASELINE_REF: ${JSON.stringify(raw)} is not a commit`)
  return raw === "" || raw === "none" ? undefined : raw
})()
const cores = (() => {
  const raw = process.env.BENCH_WIDGETS_CORES ?? "separate"
  if (raw !== "separate" && raw !== "shared") throw new Error(`BENCH_WIDGETS_CORES must be separate or shared, got ${JSON.stringify(raw)}`)
  return raw
})()

interface Figures {
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** The client's CPU per call, ms. */
  readonly clientCpu: number
}

const figures = (samples: Samples, key: string): Figures => {
  const sorted = [...samples.ms[key]!].sort((a, b) => a - b)
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    clientCpu: samples.cpu[key]! / sorted.length
  }
}

interface RunningNode {
  readonly build: Build
  readonly child: Child
  readonly port: number
  readonly token: string
}

/** The node of build `b` as the product runs it, healthy, on a fresh data dir under `tmp`. */
const startNode = async (b: Build, tmp: string, scriptFile: string, appSecret: string): Promise<RunningNode> => {
  const dataDir = path.join(tmp, `data-${b.key}`)
  const port = await freePort()
  const label = `node ${b.key}`
  const args = ["bin/clark.js", "node", "serve", "--data-dir", dataDir, "--port", String(port), "--model", `scripted:${scriptFile}`]
  const child = startChild(label, args, { CC_APP_SECRET: appSecret }, false, b.dir)
  const started = Date.now()
  await waitHealthy({ label, port, token: "", child })
  const token = String(JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken)
  log(`  ${label} (${b.commit}) healthy on port ${port} after ${seconds(Date.now() - started)} (pid ${child.process.pid})`)
  return { build: b, child, port, token }
}

/** plain-press.ts's modes, their labels in the report and their keys in the client's samples. */
const plainPresses = [
  {
    mode: "press",
    key: "plain-press",
    name: "a press done plainly",
    label: "a press done plainly (plain-press.ts: HttpApi, ledger first, the claim, the SDK call, the closing transaction)"
  },
  {
    mode: "platform",
    key: "plain-platform",
    name: "HttpApi + the tool call alone",
    label: "HttpApi + the tool call alone (plain-press.ts `platform`: nothing stored)"
  }
] as const

interface RunningPlain {
  readonly plain: (typeof plainPresses)[number]
  readonly child: Child
  readonly port: number
}

/** A server of plain-press.ts, healthy, on a fresh directory under `tmp`, with its probe process started. */
const startPlain = async (bundle: string, plain: (typeof plainPresses)[number], tmp: string, folder: string): Promise<RunningPlain> => {
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(tmp, `${plain.key}-`))
  // `clark`'s V8 setting (bin/v8-tuning.js), so that it and the node differ in their code alone.
  const args = ["--no-allocation-site-pretenuring", bundle, plain.mode, String(port), dir, folder]
  const child = startChild(plain.key, args, {}, false, root)
  await waitHealthy({ label: plain.key, port, token: "", child })
  return { plain, child, port }
}

/** The client process and its one request at a time. */
const startDriver = () => {
  const child = startChild("press client", ["--import", "tsx", path.join(root, "scripts/bench/widgets/driver.ts")], {}, true)
  const ask = (message: DriverMessage) =>
    new Promise<DriverReply>((resolve, reject) => {
      child.process.once("message", resolve)
      child.exited.then(() => reject(new Error(`the press client exited: ${child.output.slice(-40).join("\n")}`)))
      child.process.send(message)
    }).then((reply) => {
      if (reply.kind === "failed") throw new Error(`the press client failed: ${reply.message}`)
      return reply
    })
  return { child, ask }
}

const ms = (value: number) => value.toFixed(2)

/** The processes under `pids`, them included (parents read from every /proc/<pid>/stat). */
const withDescendants = (pids: ReadonlyArray<number>): ReadonlyArray<number> => {
  const parents = new Map<number, number>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]))
    } catch {
      // gone while read
    }
  }
  const found = new Set(pids)
  for (let grew = true; grew;) {
    grew = false
    for (const [pid, parent] of parents) {
      if (found.has(pid) || !found.has(parent)) continue
      found.add(pid)
      grew = true
    }
  }
  return [...found]
}

/**
 * The machine's busy CPU and the benchmark's own (this process, the nodes, the client and their probe processes),
 * ms, now: two readings give the cores other work took between them.
 */
const busyNow = (pids: ReadonlyArray<number>) => {
  const own = process.cpuUsage()
  return {
    pids,
    wall: performance.now(),
    machine: machineBusyMs(),
    ours: withDescendants(pids).reduce((sum, pid) => sum + procCpuMs(pid), (own.user + own.system) / 1000)
  }
}
const otherWorkSince = (from: ReturnType<typeof busyNow>) => {
  const to = busyNow(from.pids)
  return Math.max(0, (to.machine - from.machine - (to.ours - from.ours)) / (to.wall - from.wall))
}

const tmpDirs = new Set<string>()

const main = async () => {
  if (process.env.BENCH_WIDGETS_IN_PROCESS === "1") {
    // The reference runs on its own and exits.
    await import("./widgets/in-process.js")
    return new Promise<never>(() => {})
  }
  const startedAt = Date.now()
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-widgets-"))
  tmpDirs.add(tmp)
  const folder = widgetProbe({ readPerMinute: 600 })
  tmpDirs.add(path.dirname(folder))
  try {
    const baseline = baselineRef === undefined ? undefined : checkoutBaseline(baselineRef, { ownDependencies: true })
    const [current] = await Promise.all([buildCurrent(), baseline?.build()])
    const builds: ReadonlyArray<Build> = baseline === undefined ? [current] : [current, baseline]
    const scriptFile = path.join(tmp, "script.json")
    fs.writeFileSync(scriptFile, JSON.stringify(script, null, 2))
    const appSecret = randomBytes(24).toString("base64url")
    const nodes: Array<RunningNode> = []
    for (const b of builds) {
      const node = await startNode(b, tmp, scriptFile, appSecret)
      // Before its first tool call, so the probe process it starts then runs on its core too.
      if (cores === "separate") pin(node.child.process.pid!, separateCpus.server)
      nodes.push(node)
    }
    const plainBundle = await bundleForBench("widgets/plain-press", "plain-press")
    const plains: Array<RunningPlain> = []
    for (const plain of plainPresses) {
      const running = await startPlain(plainBundle, plain, tmp, folder)
      // Its probe process is already running: both go to the nodes' core.
      if (cores === "separate") for (const pid of withDescendants([running.child.process.pid!])) pin(pid, separateCpus.server)
      plains.push(running)
    }
    const driver = startDriver()
    if (cores === "separate") pin(driver.child.process.pid!, separateCpus.driver)
    const instances = Math.ceil((n + warmup) / perInstance)
    log(`Setting up: the probe package installed on ${nodes.length === 1 ? "the node" : "each node"}, ${instances} widgets placed by turns`)
    await driver.ask({
      kind: "setup",
      folder,
      targets: nodes.map((node) => ({ key: node.build.key, port: node.port, token: node.token, appSecret })),
      plains: plains.map((running) => ({ key: running.plain.key, port: running.port })),
      instances
    })

    const otherWork = await otherWorkCores()
    const load = os.loadavg().map((value) => value.toFixed(2)).join(", ")
    log(`${n} rounds of ${nodes.length + plains.length + 1} variants after ${warmup} unmeasured; other work on ${otherWork.toFixed(2)} cores`)
    await driver.ask({ kind: "rounds", firstRound: 0, rounds: warmup })
    const cpuBefore = nodes.map((node) => procCpuMs(node.child.process.pid))
    const plainCpuBefore = plains.map((plain) => procCpuMs(plain.child.process.pid))
    const busy = busyNow([...[...nodes, ...plains].map((server) => server.child.process.pid!), driver.child.process.pid!])
    const measuredAt = Date.now()
    const reply = await driver.ask({ kind: "rounds", firstRound: warmup, rounds: n })
    if (reply.kind !== "samples") throw new Error(`the press client answered ${reply.kind}`)
    const nodeCpu = nodes.map((node, i) => (procCpuMs(node.child.process.pid) - cpuBefore[i]!) / n)
    const plainCpu = plains.map((plain, i) => (procCpuMs(plain.child.process.pid) - plainCpuBefore[i]!) / n)
    const measuredMs = Date.now() - measuredAt
    // Before the client's exit: a process gone between the readings would count as other work.
    const otherDuring = otherWorkSince(busy)
    driver.child.process.send({ kind: "exit" } satisfies DriverMessage)
    await stopChild(driver.child)
    for (const node of nodes) await stopChild(node.child)
    for (const plain of plains) await stopChild(plain.child)

    if (process.env.BENCH_WIDGETS_DUMP) fs.writeFileSync(process.env.BENCH_WIDGETS_DUMP, JSON.stringify(reply.samples.ms))
    if (process.env.BENCH_WIDGETS_TAIL === "1") {
      for (const [key, values] of Object.entries(reply.samples.ms)) {
        const top = values.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0]).slice(0, 15)
        log(`${key} slowest (ms@round): ${top.map(([v, i]) => `${v.toFixed(1)}@${i}`).join(" ")}`)
      }
    }
    const tool = figures(reply.samples, toolVariant)
    const presses = nodes.map((node, i) => ({ node, figures: figures(reply.samples, node.build.key), cpu: nodeCpu[i]! }))
    const labelOf = (b: Build) => (b.key === "after" ? `this checkout (${b.commit})` : `the baseline ${baselineRef} (${b.commit})`)
    const row = (label: string, f: Figures, nodeCpuMs: string) =>
      `| ${label} | ${ms(f.p50)} | ${ms(f.p99)} | ${ms(f.max)} | ${ms(f.clientCpu)} | ${nodeCpuMs} |`
    const added = (f: Figures) => `${ms(f.p50 - tool.p50)} ms p50 and ${ms(f.p99 - tool.p99)} ms p99`
    const loaded = Math.max(otherWork, otherDuring) > otherWorkLimit ? " (a loaded machine: other work was running, the figures understate what the code can do)" : ""
    const section = [
      "## Local node: widget presses",
      "",
      `\`npm run bench:widgets\`, ${new Date().toISOString().slice(0, 10)}: ${n} rounds after ${warmup} unmeasured, the variants interleaved call by call${baseline === undefined ? "" : `, the baseline ${baselineRef} (${baseline.commit}, "${baseline.subject}") built in a temporary worktree`}; the compiled node (\`node bin/clark.js node serve\`) as a child process, the client in another process (node:http, one kept-alive connection per node)${cores === "separate" ? `, the node${nodes.length === 1 ? "" : "s"} on CPU ${separateCpus.server} and the client on CPU ${separateCpus.driver}` : ", on shared cores"}; load average ${load}, other work on ${otherWork.toFixed(2)} cores just before the rounds and ${otherDuring.toFixed(2)} during them${loaded}.`,
      "",
      "| variant | p50 ms | p99 ms | max ms | client CPU ms per call | node CPU ms per press |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
      row("the tool call itself (SDK client → probe `read_value`, over stdio)", tool, "–"),
      ...presses.map((p) => row(`a \`done\` press of the read binding, ${labelOf(p.node.build)}`, p.figures, ms(p.cpu))),
      ...plains.map(({ plain }, i) => row(plain.label, figures(reply.samples, plain.key), ms(plainCpu[i]!))),
      "",
      `The press adds ${presses.map((p) => `${added(p.figures)} to the tool call on ${labelOf(p.node.build)}`).join("; ")} (target: at most 3 ms p99)${plains.map(({ plain }) => `; ${plain.name} adds ${added(figures(reply.samples, plain.key))}`).join("")}. The added figure is the press's wall time at the client (the HTTP round trip, the node's checks, the claim of the invocation id, the call through the node's package runtime to its own probe process, the closing transaction) less the tool call's own. Node CPU per press: the node process's own user + system time over the measured rounds (/proc, all its threads, 10 ms ticks), its probe process's left out. Presses turned over ${instances} placed instances per node (600 presses a minute per binding at most). The two plain rows are scripts/bench/widgets/plain-press.ts, bundled as the node is and run with its V8 setting, each with its own probe process on the nodes' core: a press in the issue's shape written plainly (an HttpApi endpoint; the call recorded in a ledger file with \`synchronous = FULL\` before it is sent and its answer after; the invocation id claimed in the main database before the call; the stored answer and an audit row committed in one transaction after it; the call through the MCP SDK's client over stdio) with none of the node's rules, and the endpoint with the tool call alone (nothing stored), the least any server of this shape does. BENCH_BASELINE_REF=<commit> adds that commit's compiled node beside this one; BENCH_WIDGETS_IN_PROCESS=1 runs the earlier in-process method (a reference, not judged).`,
      ""
    ].join("\n")
    log(`\n${section}`)
    log(`Measured rounds took ${seconds(measuredMs)}; the benchmark ${seconds(Date.now() - startedAt)}`)
    if (process.env.BENCH_WIDGETS_DOCS !== "0") log(`Wrote ${writeDocs("widgets", section)}`)
  } finally {
    await stopAll()
    for (const compiler of compilers) compiler.kill("SIGKILL")
    removeBaseline()
    for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true })
  }
}

cleanUpOnExit(tmpDirs)

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nBenchmark failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    process.exit(1)
  }
)
