/** The section bench:node writes to docs/benchmarks.md: how it measured, then the tables (tables.ts). */
import * as os from "node:os"
import { otherWorkLimit, seconds } from "../Common.js"
import { separateCpus } from "./cores.js"
import { judgedBuild, judgedLayout, type Results } from "./results.js"
import { fullSized, mib, ms2, plural, settings, settingsLine } from "./settings.js"
import type { LevelResult } from "./streams.js"
import {
  atRestTable,
  buildName,
  burstTable,
  emergencyTable,
  memoryTable,
  stopTable,
  streamsTable,
  targetsTable
} from "./tables.js"

/** Other processes took more than a quarter of a core on average: the figures understate the code. */
const busyWarning = (r: Results) =>
  r.otherCores > otherWorkLimit
    ? ` **Other work was running on the machine during the measurements: these figures understate what the code can do; rerun on an idle machine before comparing.**`
    : ""

/** A run smaller than the sizes the targets are stated for says so at the top. */
const reducedWarning = () =>
  fullSized()
    ? ""
    : `\n\n**A reduced run** (the defaults keep a run under 5 minutes): fewer deltas, rounds or layouts than the full sizes (\`BENCH_FULL=1\`); its figures check the harness and the direction of a change, the full run is the one to judge the targets on.`

/** "with separate cores and then with shared cores": the layouts of `levels`, in the order they ran. */
const layoutsRun = (levels: ReadonlyArray<LevelResult>) =>
  [...new Set(levels.map((l) => l.layout))].map((layout) => `with ${layout} cores`).join(" and then ")

/** A layout missing from this run, and what the target is judged on then. */
const missingLayout = (r: Results) =>
  r.separateSkipped !== undefined
    ? ` **Separate cores were not measured in this run (${r.separateSkipped}), so the targets are judged on shared cores, the wait for the node's CPU included.**`
    : judgedBuild(r).levels.some((l) => l.layout === "shared")
    ? ""
    : ` Shared cores were not measured in this run (BENCH_CORES=separate).`

const buildsLine = (r: Results) =>
  r.builds.map((b) => `${b.build.key === "before" ? "before" : "after"}, ${b.build.commit} ("${b.build.subject}")`).join("; ")

const comparison = (r: Results) =>
  r.builds.length > 1
    ? `the baseline commit (BENCH_BASELINE_REF) checked out in a temporary git worktree and compiled there to its own dist/, and the current checkout compiled to its dist/ by its build script (\`npx tsc -p tsconfig.json\` and \`npm run build\`): ${buildsLine(r)}. Both nodes run side by side from the start; each scenario runs on both before the next one (the two alternate in which goes first), so other load on the machine falls on both alike. The targets are judged on "after"`
    : `the current checkout only (BENCH_BASELINE_REF=none): ${buildsLine(r)}`

export const renderSection = (r: Results) => {
  const cpus = os.cpus()
  const judged = judgedLayout(r)
  const after = judgedBuild(r)
  return `## Local node: SSE streams and stopping

Written by \`npm run bench:node\` (scripts/bench/node.ts) on ${r.date.toISOString().slice(0, 16).replace("T", " ")} UTC; the run took ${seconds(r.durationMs)}, builds included. Settings: \`${settingsLine()}\`.${reducedWarning()}

- Builds: ${comparison(r)}.
- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}; Node ${process.version}. The nodes, the reference server and the driver (the HTTP client) run on these cores, placed as under Cores.
- System load: the 1-minute load average was ${r.load.before.toFixed(1)} when the measurements started (the builds just before count in it) and ${r.load.after.toFixed(1)} when they ended, on ${cpus.length} cores; processes other than the servers and the driver used ${r.otherCores.toFixed(2)} cores on average during the measurements (the machine's CPU time minus theirs).${busyWarning(r)}
- Node: the compiled product, \`node bin/clark.js node serve --model scripted:<script>\` from each build's checkout on a fresh data dir (SQLite in WAL mode on the temporary directory's disk), default settings and logging, with a preload that reports its heap and CPU time over IPC every 100 ms (\`--import\`, \`--expose-gc\` for a full collection before each idle reading). RSS is VmRSS from /proc every 100 ms. The benchmark drives the nodes only through their HTTP API.
- Order: a warm-up of ${settings.warmupStreams} streams on every server, memory at rest, the stream runs (${settings.levels.join(", ")}) ${layoutsRun(after.levels)}, the burst, the stops, the emergency stops; every stream run and burst on each node and then on the reference.
- Cores: the stream runs and the burst are measured in the layouts of BENCH_CORES, set around each run with \`taskset -a -p -c\` (every thread of a process): separate cores, the server under test on CPU ${separateCpus.server} and the driver on CPU ${separateCpus.driver}; shared cores, both free to run on any of the ${cpus.length} CPUs, placed by the kernel (the servers not under test wait idle on all CPUs). They differ because Linux wakes a socket's reader on the CPU of its writer (a sync wake-up): with shared cores, when the node goes on with CPU work right after writing a delta, the driver reads that delta only once the node yields the CPU. In production the host app (the client) runs on cores of its own on a multi-core machine, so the targets are judged with separate cores, which show what the node adds per delta; shared-core figures, when measured (\`BENCH_CORES=separate,shared\`), are kept for reference, as what a client on the node's cores sees. With separate cores the node has one CPU for all its threads, so where it is busy, e.g. starting hundreds of streams at once, its gaps and times to first event are longer than with shared cores. The warm-ups, memory at rest, the stops and the emergency stops run on shared cores.${missingLayout(r)}
- Script: streamed turns write ${settings.deltas} deltas ${settings.delayMs} ms apart (the first at once), each delta's text the model's \`process.hrtime.bigint()\` when it produced it (the script step \`{"stamp": true}\`); burst turns write ${settings.burstDeltas} such deltas; long turns write one delta and then wait ${settings.longDelayMs / 1000} s, so only a stop ends them.
- Driver: \`node:http\` with a keep-alive agent of up to 600 sockets, opened (GET /health) before each run so streams do not pay for connecting (the burst: see below); every stream in its own conversation, all streams of a run sent at once. Timestamps are taken when a chunk reaches the driver's \`data\` handler, so the driver's own delays are in the figures (its CPU is in the table). Idle sockets kept from an earlier run are closed before each run; a request on a keep-alive socket the server had just closed is sent again, up to 3 times (${r.connectionRetries} retries this run).
- Delta → bytes (the "added per delta" target, the issue's "delta-to-bytes latency"): inside the node, for every delta, the end of the socket write that handed its bytes to the kernel minus the stamp in the delta (the preload wraps \`net.Socket\`'s \`_write\` and \`_writev\`, which run once any cork is lifted, and reads the stamps out of the bytes written; the wrapper's own scan is counted against the node). This is what the node adds between the model handing over a delta and its bytes leaving: the turn engine, publishing the event, SSE framing, the HTTP chunk and the write. The target is judged on its p99 with ${judged} cores, over every delta of the run (the count must match the deltas the driver received). The plain node:http reference runs with the same preload, so its own delta → bytes (its timer's stamp to the end of its socket write) is the floor of this machine for the same measure.
- Delivery at the client: for every delta, the driver's \`process.hrtime.bigint()\` when its chunk arrived minus the stamp. Both read CLOCK_MONOTONIC, which the processes of one machine share, so this is the delta-to-bytes path plus the kernel's loopback and the driver being scheduled and reading it. "plain node:http" is a reference server in a child process that reads and parses the request's JSON body, answers the node's SSE shape (the opening comment, stamped deltas on the same timers, \`done\`) with nothing else (no framework, storage or token check): its figures in the same layout are the floor of this machine and this driver.
- Gap: two consecutive deltas of a stream at the driver minus the scripted ${settings.delayMs} ms, over all gaps of all streams; the mean per stream ((last − first − ${settings.deltas - 1} × ${settings.delayMs} ms) / ${settings.deltas - 1}) is shown too. Besides the delivery path, a gap contains the lateness of the model's own timer when the node's event loop is busy, above all with the start-up of the other streams of the run, so it overstates what the node adds per delta. Hence the time to first delta (from the request sent), which shows how long that start-up lasts, and the steady-state gap: only the gaps whose two deltas both arrived after every stream of the run (each of the ${settings.singleRepeats} sequential runs for the single stream) had its first delta.
- Burst: ${settings.burst} streams sent at once, each in a new conversation and ${settings.burstSockets === "new" ? "on a new connection (BENCH_BURST_SOCKETS=new: the connection's set-up is in the figures, for the node and the reference alike)" : "on an idle keep-alive socket opened before (BENCH_BURST_SOCKETS=warm)"}, ${plural(settings.burstRounds, "round")} in sequence, the values of all rounds together; per stream, from the request sent to the response's head (with the node's opening comment), to the first event of any kind (the target, judged on its p99 against the reference's p99 in the same layout and run) and to the first \`delta\`. Beside the node and the reference, the burst also runs on **the shape, done plainly** (scripts/bench/node/plain-shape.ts, bundled as the node is and run with its V8 setting): a streamed message in the shape the issue requires, written the plain way, with none of the node's rules or tuning: an HttpApi endpoint with its payload decoded, the message's and the reply's rows committed to SQLite (WAL, \`synchronous = NORMAL\`) before the answer, the turn on a fiber of its own with the model an Effect Stream publishing to the turn's PubSub, the reply and its \`done\` committed at the end, and the response an \`HttpServerResponse.stream\` of the follower's Stream; no bearer check, audit, history read, steering, deadlines or stop. And on **HttpApi + stream response alone** (the same file's \`platform\` mode): the endpoint answering the model's Stream itself, SSE-encoded, with nothing stored, no turn fiber and no PubSub, the least any server of this shape does (a client that leaves would end its turn, which the spec does not allow: a floor under the node, not a way to build it). Their ratios to plain node:http are what the shape itself costs in this run.

### Targets

${targetsTable(r)}

### Concurrent streams

${streamsTable(r)}

### Burst of starts

${burstTable(r)}

### Memory of the node

From the stream runs with ${judged} cores. "Per stream" is (peak RSS − idle RSS) / streams, the idle reading taken after a full collection just before the run; the node's high-water RSS (VmHWM) over the whole benchmark was ${r.builds.map((b) => `${b.peakRssOverall === undefined ? "–" : mib(b.peakRssOverall)} MiB (${buildName(b)})`).join(", ")}.

${memoryTable(r)}

At rest: ${settings.atRestStreams} long turns, every stream open and waiting for its next delta, read after a full collection (the emergency stop that then ended them took ${r.builds.map((b) => `${ms2(b.atRest.stopMs)} ms for ${b.atRest.stopTurns} turns (${buildName(b)})`).join(", ")}; not a target).

${atRestTable(r)}

### Stop

${settings.stopTurns} long turns running, each with its stream open; then, one conversation at a time, POST /conversations/{id}/stop and wait for that stream to end (${settings.stopTurns - 1} to 0 other turns still running).

${stopTable(r)}

### Emergency stop

${settings.emergencyTurns} long turns running (every stream has its first delta), then POST /stop, timed until all ${settings.emergencyTurns} streams have ended with \`done\` (resolution \`stopped\`); ${plural(settings.emergencyRounds, "round")} per build, new conversations each round.

${emergencyTable(r)}
`
}
