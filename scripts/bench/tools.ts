/**
 * `npm run bench:tools`: what the node adds to a package tool call (issue 14, point 8), measured against the
 * same call made without it, in one run and one process, the variants interleaved call by call (which goes
 * first alternates) so the machine's load hits both alike.
 *
 * The node is built in-process from its own layers (`ServicesLive` and `ApiLive` of src/node/Server.ts, the
 * real MCP runtime, SQLite stores and effect ledger on a temporary data dir, the scripted model, HTTP on a
 * loopback port); the probe service package (test/node/services/fixtures/probe-service, bundled with esbuild
 * into an installable copy as the package-tool tests do) is installed through the node's own routes.
 *
 * 1. Read: `PackageTools.call("probe-service__read_value")` (catalogue, input check, policy and its
 *    preferences, approvals, the runtime's slot, MCP stdio, the audit row) against the SDK `Client` over
 *    `StdioClientTransport` calling `read_value` on its own process of the same bundled copy. Target: the
 *    node adds ≤ 2 ms p99. A second SDK client on a process of its own runs in the same rounds: how far two
 *    identical paths' p99 differ on this machine, the floor under which a difference is noise. Then the pieces of that call alone (runtime, store reads, audit row), a quarter
 *    as many times: where the added time goes. Each row also gives the median CPU time of this process per
 *    call, which the machine's load stretches far less than wall time.
 * 2. Write: `write_value` (risk local-write) through PackageTools over the node's ledger, whose `record` is
 *    timed inside the call, against the same PackageTools over a ledger that stores nothing; and the ledger's
 *    own micro-benchmark (scripts/bench/ledger.ts). Target: the ledger record ≤ 1 ms p99.
 * 3. For information: whole turns over HTTP (the waiting route, POST /conversations/{id}/messages), the
 *    scripted model calling the read tool then answering, against a turn answering the same text at once.
 *
 * Defaults (under 2 minutes on a quiet machine): 2,000 read calls per variant after 200 unmeasured, 1,000
 * write calls and ledger records, 100 turns each. BENCH_FULL=1: 10,000 reads, 5,000 writes, 1,000 turns;
 * BENCH_TOOLS_N, BENCH_TOOLS_WRITES and BENCH_TOOLS_TURNS set them. A run under `--cpu-prof` (or with
 * BENCH_TOOLS_DOCS=0) prints its tables and leaves docs/benchmarks.md alone.
 *
 * BENCH_BASELINE_REF=<commit> ("before") checks that commit out in a temporary git worktree (node_modules linked,
 * removed at the end) and loads its node's modules through tsx into this process: a second node with its own
 * data dir, port and probe process, whose `PackageTools.call` of the read is a fourth variant of the read rounds,
 * so before and after are measured in the same run under the same load. Its write call (over its own ledger, the
 * record timed inside) is a third variant of the write rounds, and its ledger a variant of the ledger's
 * micro-benchmark.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as PackageToolsLive from "../../layers/node/packages/PackageTools.js"
import { Ledger } from "../../services/node/Ledger.js"
import { type CallContext, PackageTools } from "../../services/node/PackageTools.js"
import { PackageRecords } from "../../services/node/PackageRecords.js"
import { ServiceRuntime } from "../../services/node/ServiceRuntime.js"
import { PreferenceStore } from "../../services/node/PreferenceStore.js"
import { TaskApprovals } from "../../services/node/TaskApprovals.js"
import { AuditLog } from "../../services/node/AuditLog.js"
import { probeCopy, probeId } from "../../test/node/tools/Fixtures.js"
import { log, otherWorkCores, positiveInt, writeDocs } from "./Common.js"
import { type BaselineLedger, benchLedger } from "./ledger.js"
import { checkoutBaseline, removeBaseline } from "./node/builds.js"
import { currentModules, loadModules, type NodeModules } from "./node/modules.js"
import { type LedgerModules, loadLedgerModules, newConversation, startNode, turn } from "./tools/node.js"
import { report, type Results } from "./tools/report.js"
import { figures, interleaved, noLedger, type Sample, timed, timedLedger } from "./tools/timing.js"
import * as Trace from "./tools/trace.js"

const full = process.env.BENCH_FULL === "1"
const n = positiveInt("BENCH_TOOLS_N", full ? 10_000 : 2_000)
/** Write calls wait on the ledger's fsync: fewer of them keep the default run short. */
const writes = positiveInt("BENCH_TOOLS_WRITES", full ? 5_000 : 1_000)
const turns = positiveInt("BENCH_TOOLS_TURNS", full ? 1_000 : 100)
const warmup = 200
/** BENCH_TOOLS_ONLY=read,breakdown,write,turns,ledger (any of them) runs only those parts, e.g. to profile one. */
const only = process.env.BENCH_TOOLS_ONLY?.split(",")
const part = (name: string) => only === undefined || only.includes(name)
const profiling = only !== undefined || process.execArgv.some((flag) => flag.startsWith("--cpu-prof")) || process.env.BENCH_TOOLS_DOCS === "0"

const run = (baseline: NodeModules | undefined, baselineLedger: LedgerModules | undefined) => Effect.scoped(Effect.gen(function*() {
  const folder = probeCopy()
  yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(path.dirname(folder), { recursive: true, force: true })))
  const { context, baseUrl, token, conversationId } = yield* startNode(currentModules, folder)
  const callContext: CallContext = { taskId: "task_bench", conversationId, origin: "person", channel: "text" }
  const before = baseline === undefined ? undefined : yield* startNode(baseline, folder)

  // 1. Read: the node's PackageTools against the SDK client on a process of its own.
  const tools = Context.get(context, PackageTools)
  const sdkClient = Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(folder, "server.mjs")], cwd: folder })
      const client = new Client({ name: "bench-direct", version: "1.0.0" }, { capabilities: {} })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )
  const direct = yield* sdkClient
  // A second direct client on a process of its own: how far two identical paths' p99 differ on this machine.
  const twin = yield* sdkClient
  const readInput = { key: "colour" }
  const expectDone = (outcome: { readonly status: string; readonly output: unknown }) =>
    outcome.status === "done" ? Effect.void : Effect.dieMessage(`the call failed: ${JSON.stringify(outcome.output)}`)
  log(`Read: ${n} calls each, after ${warmup} unmeasured`)
  const beforeCall = before === undefined ? [] : [(() => {
    const beforeTools = Context.get(before.context, PackageTools)
    const beforeContext: CallContext = { ...callContext, conversationId: before.conversationId }
    return timed(Effect.flatMap(beforeTools.call(beforeContext, "probe-service__read_value", readInput), expectDone))
  })()]
  const [directRead, nodeRead, twinRead, beforeRead] = yield* interleaved(part("read") ? n : 1, part("read") ? warmup : 0, [
    timed(Effect.promise(() => direct.callTool({ name: "read_value", arguments: readInput }))),
    timed(Effect.flatMap(tools.call(callContext, "probe-service__read_value", readInput), expectDone)),
    timed(Effect.promise(() => twin.callTool({ name: "read_value", arguments: readInput }))),
    ...beforeCall
  ])

  // The pieces of that call alone, interleaved the same way: where the node's time goes.
  let breakdown: Results["breakdown"] = []
  if (part("breakdown")) {
    const records = Context.get(context, PackageRecords)
    const runtime = Context.get(context, ServiceRuntime)
    const preferences = Context.get(context, PreferenceStore)
    const approvals = Context.get(context, TaskApprovals)
    const audit = Context.get(context, AuditLog)
    const installed = (yield* records.installed).find((p) => p.packageId === probeId)!
    const pkg = { packageId: installed.packageId, digest: installed.digest, cachePath: installed.cachePath, manifest: installed.manifest }
    const pieces: ReadonlyArray<readonly [string, Effect.Effect<Sample>]> = [
      ["SDK client → probe `read_value` (direct, as above)", timed(Effect.promise(() => direct.callTool({ name: "read_value", arguments: readInput })))],
      ["`ServiceRuntime.call` alone (slot, invoke, the node's SDK client)", timed(Effect.orDie(runtime.call(pkg, { tool: "read_value", input: readInput })))],
      ["`ServiceRuntime.tools` (a hold of the running service alone, as a write's `reach` takes it)", timed(Effect.orDie(runtime.tools(pkg)))],
      ["two preference reads (machineTurns, deny rules)", timed(Effect.zip(preferences.get("execution.machineTurns"), preferences.get("execution.denyRules")))],
      ["`TaskApprovals.grantedFor` (only a step that asks runs it)", timed(approvals.grantedFor(conversationId, "sha256:none"))],
      ["`AuditLog.append` of the tool-call row", timed(audit.append({ kind: "bench", conversationId, surface: "person", channel: "text", detail: { tool: "read_value", status: "done" } }))],
      ["`PackageTools.call` (the whole, as above)", timed(Effect.flatMap(tools.call(callContext, "probe-service__read_value", readInput), expectDone))]
    ]
    const rounds = Math.max(1, Math.floor(n / 4))
    log(`Breakdown: ${rounds} rounds of ${pieces.length} pieces`)
    const measured = yield* interleaved(rounds, warmup, pieces.map(([, effect]) => effect))
    breakdown = pieces.map(([what], i) => [what, measured[i]!] as const)
  }

  // 2. Write: the same PackageTools over the node's ledger (its record timed) and over a ledger storing nothing.
  const recordTimes: Array<Sample> = []
  const over = (ledger: Ledger["Type"]) =>
    PackageToolsLive.make().pipe(Effect.provide(Context.add(context, Ledger, ledger)))
  const withLedger = yield* over(timedLedger(Context.get(context, Ledger), recordTimes))
  const withoutLedger = yield* over(noLedger)
  const writeInput = { key: "colour", value: "blue" }
  log(`Write: ${writes} calls each, after ${warmup} unmeasured`)
  Trace.start()
  // The baseline node's write call over its own ledger, its record timed the same way.
  const beforeRecordTimes: Array<Sample> = []
  const beforeWrite = before === undefined || baselineLedger === undefined ? [] : [yield* Effect.map(
    baselineLedger.PackageToolsLive.make().pipe(Effect.provide(Context.add(
      before.context,
      baselineLedger.Ledger,
      timedLedger(Context.get(before.context, baselineLedger.Ledger), beforeRecordTimes, "before-record")
    ))),
    (beforeTools) =>
      timed(Effect.flatMap(
        beforeTools.call({ ...callContext, conversationId: before.conversationId }, "probe-service__write_value", writeInput),
        expectDone
      ))
  )]
  const [writeNoLedger, writeLedger, writeBefore] = yield* interleaved(part("write") ? writes : 1, part("write") ? warmup : 0, [
    timed(Effect.flatMap(withoutLedger.call(callContext, "probe-service__write_value", writeInput), expectDone)),
    timed(Effect.flatMap(withLedger.call(callContext, "probe-service__write_value", writeInput), expectDone)),
    ...beforeWrite
  ])
  Trace.write()
  const record = figures(recordTimes.slice(warmup))
  const beforeRecord = writeBefore === undefined ? undefined : figures(beforeRecordTimes.slice(warmup))

  // 3. Whole turns over HTTP, each pair in a conversation of its own so history is alike.
  let turnFigures: Results["turns"]
  if (part("turns")) {
    log(`Turns: ${turns} each, after 20 unmeasured`)
    let conversation = ""
    const [plain, tool] = yield* interleaved(turns, 20, [
      Effect.flatMap(newConversation(baseUrl, token), (id) => (conversation = id, timed(turn(baseUrl, token, id, "plain")))),
      Effect.suspend(() => timed(turn(baseUrl, token, conversation, "read probe")))
    ])
    turnFigures = { plain: plain!, tool: tool! }
  }

  log("Ledger micro-benchmark (scripts/bench/ledger.ts)")
  const baselineBench: BaselineLedger | undefined = baseline === undefined || baselineLedger === undefined
    ? undefined
    : (dir) =>
      Effect.map(
        Layer.build(baselineLedger.SqlLedger.layer(dir).pipe(Layer.provide(baseline.NodeDatabase.layer(dir)))),
        (context) => Context.get(context, baselineLedger.Ledger)
      )
  const ledgerBench = yield* benchLedger({
    n: part("ledger") ? writes : 1,
    warmup: part("ledger") ? 200 : 0,
    baseline: baselineBench
  })
  return {
    read: { direct: directRead!, node: nodeRead!, twin: twinRead!, ...(beforeRead === undefined ? {} : { before: beforeRead }) },
    breakdown,
    write: {
      noLedger: writeNoLedger!,
      ledger: writeLedger!,
      record,
      ...(writeBefore === undefined || beforeRecord === undefined ? {} : { before: writeBefore, beforeRecord })
    },
    turns: turnFigures,
    ledgerBench
  } satisfies Results
}))

const main = async () => {
  const baselineRef = process.env.BENCH_BASELINE_REF
  const baseline = baselineRef === undefined || baselineRef === "none" ? undefined : checkoutBaseline(baselineRef)
  try {
    const otherWork = await otherWorkCores()
    const load = os.loadavg().map((value) => value.toFixed(2)).join(", ")
    const results = await Effect.runPromise(run(
      baseline === undefined ? undefined : await loadModules(baseline.dir),
      baseline === undefined ? undefined : await loadLedgerModules(baseline.dir)
    ))
    const section = report(results, {
      n,
      writes,
      turns,
      warmup,
      otherWork,
      load,
      ...(baseline === undefined ? {} : { baseline: `${baselineRef} (${baseline.commit}, "${baseline.subject}")` })
    })
    console.log(`\n${section}`)
    if (!profiling) log(`Wrote ${writeDocs("tools", section)}`)
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
