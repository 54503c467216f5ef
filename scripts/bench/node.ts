/**
 * `npm run bench:node`: the local node's streaming and stopping, with the scripted model, before and after a change
 * in one run. The parts live in scripts/bench/node/.
 *
 * 1. Builds (builds.ts): the baseline commit BENCH_BASELINE_REF ("before"; default e7135c2, the last commit before
 *    the turn engine's re-founding; `none` skips it) in a temporary git worktree (`git worktree add --detach`,
 *    node_modules linked, `npx tsc -p tsconfig.json` to its own dist/), removed at the end, also on failure or
 *    Ctrl-C; and the current checkout ("after"), compiled to its dist/ by `npm run build`. Each node runs as a child process from its
 *    own checkout (`node bin/clark.js node serve --model scripted:<script>` on a fresh data dir) with a small
 *    preload (sources.ts) that reports its heap, CPU time and delta → bytes times over IPC; RSS is read from
 *    /proc. The benchmark drives both only through the HTTP API, so any build that serves it can be measured.
 * 2. Every scenario runs on both nodes before the next one (which goes first alternates), so machine noise hits
 *    both alike; stream runs and the burst also on the plain node:http reference, the floor of the machine:
 *    - memory at rest: BENCH_AT_REST long turns with their streams open, heap and RSS after a full collection;
 *    - concurrent streams (BENCH_LEVELS, each in its own conversation; streams.ts): every turn writes BENCH_DELTAS
 *      deltas BENCH_DELAY_MS apart, each delta's text the model's `process.hrtime.bigint()` when it produced it.
 *      Per delta: delta → bytes inside the node (the preload scans socket writes for stamps; the "≤ 1 ms p99 added
 *      per delta" target), delivery at the client (arrival at the driver minus the stamp) and the gaps between
 *      deltas; per stream the time to first delta; the node's memory and CPU. In each layout of BENCH_CORES
 *      (cores.ts): separate cores (server under test on CPU 0, driver on CPU 1) and/or shared cores;
 *    - the burst: BENCH_BURST streams sent at once, BENCH_BURST_ROUNDS rounds, each stream on a new connection
 *      (BENCH_BURST_SOCKETS=new) or on a keep-alive socket opened before (warm); time to the response's head, to
 *      the first event and to the first delta, the first event's p99 judged against 4× the reference's; also on
 *      the shape done plainly (plain-shape.ts: the HttpApi, SQL, fiber and Stream shape without the node's
 *      rules or tuning, bundled under dist/bench/), so that what the shape itself costs is read in the same run;
 *    - stop (stopping.ts): BENCH_STOPS long turns, stopped one at a time, until each stream has ended;
 *    - emergency stop: 200 long turns, POST /stop, until all streams have ended (BENCH_ESTOP_ROUNDS rounds).
 * 3. Prints the tables (both builds side by side, the targets judged on "after") and rewrites its section of
 *    docs/benchmarks.md (report.ts, tables.ts).
 *
 * The defaults keep a run under 5 minutes (20 deltas, separate cores only, 3 burst rounds, 1 emergency-stop
 * round); BENCH_FULL=1 gives the full sizes wherever a setting is not given (40 deltas, separate and shared
 * cores, 5 burst rounds, 3 emergency-stop rounds). BENCH_NODE_FLAGS: extra Node flags for the nodes under test,
 * e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`; a run with flags prints its tables but leaves docs/benchmarks.md
 * alone. BENCH_ONLY=burst runs only the warm-up and the burst and prints its lines (nothing written); BENCH_ONLY=estop only the warm-up and the emergency stops, with the node's CPU per stopped turn. README's configuration table lists every setting.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { stopAll, stopChild } from "./Children.js"
import { log, machineBusyMs, otherWorkLimit, percentile, seconds, writeDocs } from "./Common.js"
import {
  type Build,
  buildCurrent,
  buildPlainShape,
  checkoutBaseline,
  cleanUpOnExit,
  compilers,
  removeBaseline,
  startNode,
  startReference,
  startPlainShape,
  writeNodeFiles
} from "./node/builds.js"
import { controlAgent, counters, streamAgent, type Target, warmSockets } from "./node/client.js"
import { type Cores, enterLayout, probeCores, separateCpus } from "./node/cores.js"
import { procCpuMs, readHwm } from "./node/probe.js"
import { renderSection } from "./node/report.js"
import { type BuildResults, cpuPerStart } from "./node/results.js"
import { type Layout, mib, ms2, now, plural, settings, settingsLine } from "./node/settings.js"
import { type AtRest, type EmergencyRound, runAtRest, runEmergency, runStops, type StopResult } from "./node/stopping.js"
import { burstTurns, describeLevel, type LevelResult, runLevel, streamTurns } from "./node/streams.js"

/** A server under test and what it measured so far. */
interface Server {
  readonly target: Target
  readonly build: Build | undefined
  /** Its conversations made first and its CPU and memory read (the nodes and the shape done plainly). */
  readonly measured: boolean
  readonly levels: Array<LevelResult>
  readonly burst: Array<LevelResult>
  atRest?: AtRest
  stops?: StopResult
  readonly emergency: Array<EmergencyRound>
}

const serverOf = (target: Target, build: Build | undefined, measured = build !== undefined): Server => ({
  target,
  build,
  measured,
  levels: [],
  burst: [],
  emergency: []
})

/** The nodes in the order of the next scenario: the one that goes first alternates. */
let scenario = 0
const inTurn = (nodes: ReadonlyArray<Server>) => (scenario++ % 2 === 0 ? [...nodes] : [...nodes].reverse())

/** `f` with the server under test and the driver in `wanted`'s layout, back on shared cores afterwards. */
const inLayout = async <A>(cores: Cores, wanted: Layout, server: Server, f: (layout: Layout) => Promise<A>) => {
  const layout = enterLayout(cores, wanted, server.target.child)
  try {
    return await f(layout)
  } finally {
    enterLayout(cores, "shared", server.target.child)
  }
}

/**
 * Every level in each layout of BENCH_CORES, on every node and then the reference; returns the layouts measured
 * (separate cores that cannot be set give shared ones, measured once).
 */
const streamRuns = async (cores: Cores, nodes: ReadonlyArray<Server>, reference: Server) => {
  const measured: Array<Layout> = []
  for (const wanted of settings.cores) {
    if (measured.includes(wanted === "separate" && cores.separateSkipped !== undefined ? "shared" : wanted)) continue
    for (const streams of settings.levels) {
      for (const server of [...inTurn(nodes), reference]) {
        const result = await inLayout(cores, wanted, server, (layout) =>
          runLevel(server.target, layout, streams, streams === 1 ? settings.singleRepeats : 1, server.measured, streamTurns))
        log(describeLevel(server.target.label, result))
        server.levels.push(result)
        if (!measured.includes(result.layout)) measured.push(result.layout)
      }
    }
  }
  return measured
}

/** The burst on every node, then on plain-shape.ts's two modes and on the reference. */
const burstRuns = async (
  cores: Cores,
  layouts: ReadonlyArray<Layout>,
  nodes: ReadonlyArray<Server>,
  shapes: ReadonlyArray<Server>,
  reference: Server
) => {
  for (const wanted of layouts) {
    for (const server of [...inTurn(nodes), ...shapes, reference]) {
      const result = await inLayout(cores, wanted, server, (layout) =>
        runLevel(server.target, layout, settings.burst, settings.burstRounds, server.measured, burstTurns))
      log(
        `  ${server.target.label}, ${result.layout} cores, ${settings.burst} streams at once ×${settings.burstRounds}: ` +
          `response head p99 ${ms2(percentile(result.toResponse, 0.99))} ms, first event p50 ${ms2(percentile(result.toFirstEvent, 0.5))} / ` +
          `p99 ${ms2(percentile(result.toFirstEvent, 0.99))} ms, first delta p99 ${ms2(percentile(result.ttfe, 0.99))} ms` +
          // The server's CPU (preload, process.cpuUsage) from before the first round to after the last, per start.
          (result.serverCpu === undefined ? "" : `, server CPU ${ms2(cpuPerStart(result)!)} ms per start`) +
          (result.failed > 0 ? `, ${result.failed} FAILED (${result.failureDetail})` : "")
      )
      server.burst.push(result)
    }
  }
}

const emergencyRuns = async (nodes: ReadonlyArray<Server>) => {
  log(`Emergency stop: ${settings.emergencyTurns} long turns, ${plural(settings.emergencyRounds, "round")}`)
  for (let round = 0; round < settings.emergencyRounds; round++) {
    for (const node of inTurn(nodes)) {
      const result = await runEmergency(node.target)
      log(
        `  ${node.target.label}, round ${round + 1}: stopped ${JSON.stringify(result.reported)}; answered after ` +
          `${ms2(result.answeredMs)} ms, all ${settings.emergencyTurns} streams ended after ${ms2(result.lastEndMs)} ms, ` +
          `node CPU ${ms2(result.cpuMs)} ms (${ms2(result.cpuMs / settings.emergencyTurns)} ms per turn)`
      )
      node.emergency.push(result)
    }
  }
}

const main = async () => {
  const startedAt = Date.now()
  log(
    `Node benchmark (${settingsLine()}): streams of ${settings.deltas} deltas ${settings.delayMs} ms apart at ` +
      `${settings.levels.join(", ")} concurrent streams; a burst of ${settings.burst} ×${settings.burstRounds}; ${settings.stopTurns} stops; ` +
      `emergency stop of ${settings.emergencyTurns} turns ×${settings.emergencyRounds}`
  )
  const cores = probeCores()
  log(
    cores.separateSkipped === undefined
      ? `Core layouts: ${settings.cores.join(", ")} (separate: server on CPU ${separateCpus.server}, driver on CPU ${separateCpus.driver}; shared: both on CPUs ${cores.shared})`
      : `Core layouts: shared only; separate cores skipped: ${cores.separateSkipped}`
  )
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-node-"))
  tmpDirs.add(tmp)
  try {
    // Both builds at once: each tsc is mostly one thread.
    const baseline = settings.baselineRef === undefined ? undefined : checkoutBaseline(settings.baselineRef, { ownDependencies: true })
    const [current] = await Promise.all([buildCurrent(), baseline?.build()])
    const builds: ReadonlyArray<Build> = [...(baseline === undefined ? [] : [baseline]), current]
    const files = writeNodeFiles(tmp)
    const loadBefore = os.loadavg()[0] ?? 0
    const phase = (what: string) => log(`${what} (at ${seconds(Date.now() - startedAt)})`)
    phase("Starting the nodes, the shape done plainly and the reference")
    const nodes: Array<Server> = []
    for (const b of builds) nodes.push(serverOf(await startNode(b, tmp, files), b))
    const shapeBundle = await buildPlainShape()
    const shapes = [
      serverOf(await startPlainShape(files, tmp, shapeBundle, "turn"), undefined, true),
      serverOf(await startPlainShape(files, tmp, shapeBundle, "platform"), undefined, true)
    ]
    const reference = serverOf(await startReference(files), undefined)
    const servers = [...nodes, ...shapes, reference]
    const serversCpuMs = () => servers.reduce((sum, s) => sum + procCpuMs(s.target.child.process.pid), 0)
    const window = { wall: now(), machine: machineBusyMs(), servers: serversCpuMs(), driver: process.cpuUsage() }

    phase(`Warm-up: ${settings.warmupStreams} streams on every server`)
    for (const server of servers) {
      await warmSockets(server.target, settings.warmupStreams)
      const warm = await runLevel(server.target, "shared", settings.warmupStreams, 1, server.measured)
      if (warm.failed > 0) throw new Error(`${server.target.label} warm-up: ${warm.failed} streams failed (${warm.failureDetail})`)
    }

    if (settings.only === "burst") {
      const layouts = settings.cores.map((wanted): Layout => (wanted === "separate" && cores.separateSkipped !== undefined ? "shared" : wanted))
      phase(`Burst only (BENCH_ONLY=burst): ${settings.burst} streams started at once, ${plural(settings.burstRounds, "round")}`)
      await burstRuns(cores, [...new Set(layouts)], nodes, shapes, reference)
      for (const server of servers) await stopChild(server.target.child)
      log(`Not written to docs/benchmarks.md: BENCH_ONLY=burst (benchmark took ${seconds(Date.now() - startedAt)})`)
      return
    }

    if (settings.only === "estop") {
      await emergencyRuns(nodes)
      for (const node of nodes) {
        const cpu = node.emergency.map((r) => r.cpuMs / r.turns)
        log(`  ${node.target.label}: node CPU per stopped turn, rounds ${cpu.map(ms2).join(", ")}; median ${ms2(percentile([...cpu].sort((a, b) => a - b), 0.5))} ms`)
      }
      for (const server of servers) await stopChild(server.target.child)
      log(`Not written to docs/benchmarks.md: BENCH_ONLY=estop (benchmark took ${seconds(Date.now() - startedAt)})`)
      return
    }

    phase(`Memory at rest: ${settings.atRestStreams} long turns`)
    for (const node of inTurn(nodes)) {
      const a = await runAtRest(node.target, settings.atRestStreams)
      node.atRest = a
      log(
        `  ${node.target.label}: RSS ${mib(a.idleRss)} → ${mib(a.rss)} MiB, heap used ${mib(a.idleHeapUsed)} → ${mib(a.heapUsed)} MiB; ` +
          `emergency stop of ${a.stopTurns} turns: streams ended after ${ms2(a.stopMs)} ms`
      )
    }

    phase("Concurrent streams")
    const layouts = await streamRuns(cores, nodes, reference)

    phase(`Burst: ${settings.burst} streams started at once, ${plural(settings.burstRounds, "round")}`)
    await burstRuns(cores, layouts, nodes, shapes, reference)

    phase(`Stop: ${settings.stopTurns} long turns, stopped one at a time`)
    for (const node of inTurn(nodes)) {
      const stops = await runStops(node.target)
      node.stops = stops
      log(
        `  ${node.target.label}: stop to end of stream p50 ${ms2(percentile(stops.ended, 0.5))} / p99 ${ms2(percentile(stops.ended, 0.99))} ms ` +
          `(response p50 ${ms2(percentile(stops.answered, 0.5))} ms)`
      )
    }

    await emergencyRuns(nodes)

    phase("Measurements done")
    const peaks = nodes.map((n) => readHwm(n.target.child.process.pid!))
    const loadAfter = os.loadavg()[0] ?? 0
    const driverCpu = process.cpuUsage(window.driver)
    const otherCores = Math.max(
      0,
      (machineBusyMs() - window.machine - (serversCpuMs() - window.servers) - (driverCpu.user + driverCpu.system) / 1000) /
        (now() - window.wall)
    )
    log(`  other processes used ${otherCores.toFixed(2)} cores on average during the measurements`)
    if (otherCores > otherWorkLimit) log("  warning: other work was running; the figures understate what the code can do")
    for (const server of servers) await stopChild(server.target.child)

    const results: ReadonlyArray<BuildResults> = nodes.map((n, i) => ({
      build: n.build!,
      levels: n.levels,
      burst: n.burst,
      atRest: n.atRest!,
      stops: n.stops!,
      emergency: n.emergency,
      peakRssOverall: peaks[i]
    }))
    const section = renderSection({
      date: new Date(),
      durationMs: Date.now() - startedAt,
      load: { before: loadBefore, after: loadAfter },
      otherCores,
      builds: results,
      reference: { levels: reference.levels, burst: reference.burst },
      shapes: shapes.map((s) => ({ label: s.target.label, levels: [], burst: s.burst })),
      separateSkipped: cores.separateSkipped,
      connectionRetries: counters.connectionRetries
    })
    log(`\n${section}`)
    if (settings.nodeFlags.length > 0) {
      log(`Not written to docs/benchmarks.md: the nodes ran with ${settings.nodeFlags.join(" ")} (benchmark took ${seconds(Date.now() - startedAt)})`)
    } else {
      log(`Written to ${writeDocs("node", section)} (benchmark took ${seconds(Date.now() - startedAt)})`)
    }
  } finally {
    streamAgent.destroy()
    controlAgent.destroy()
    await stopAll()
    // A build that failed leaves the other one running: it goes before its worktree does.
    for (const compiler of compilers) compiler.kill("SIGKILL")
    removeBaseline()
    fs.rmSync(tmp, { recursive: true, force: true })
    tmpDirs.delete(tmp)
  }
}

const tmpDirs = new Set<string>()

cleanUpOnExit(tmpDirs)

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nBenchmark failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
