/**
 * `npm run bench:artifacts`: artifact chunk writes through the node against raw `fs` appends, in one run.
 *
 * 1. The node in this process on a loopback port (the real HTTP server, handlers, SQLite store and files) on a
 *    fresh data dir; a conversation created over HTTP and a widget placed in its database.
 * 2. Node: BENCH_ARTIFACTS_MIB MiB written as 262,144-byte chunks (base64 in JSON, the largest the route takes),
 *    one at a time over one keep-alive connection, into files of 24 MiB (then discarded so the widget's 128 MiB
 *    never fills). Each chunk is on disk (datasync) before it is answered. Two clients:
 *    - in its own process (scripts/bench/artifacts/client.ts, node:http, bodies from buffers made once): the
 *      node's own cost, the figure judged against the target, as the other benches drive their servers;
 *    - in the node's process (fetch and JSON.stringify per chunk, as this bench did until 2026-11-27): the
 *      client's work counted against the node, for comparison with older figures.
 * 3. The store alone: `ArtifactStore.append` of the same chunks in this process on a data dir of its own (checks,
 *    write, datasync, row update; no HTTP, no JSON, no base64).
 * 4. Raw fs, the same bytes in the same chunks: `FileHandle.appendFile` then `datasync` per chunk (the same
 *    guarantee), and `appendFile` alone (the page cache, no guarantee) for scale.
 * 5. Rounds run every variant in turn (the first one rotates), so all see the same load; the best round of each
 *    is compared. The load average and the cores other work kept busy just before the run are printed with it.
 * 6. After the rounds, the pieces of a chunk outside the store, each timed alone (artifacts/pieces.ts).
 * 7. Prints the tables and rewrites its section of docs/benchmarks.md (not when run with Node flags such as
 *    `--cpu-prof`, or with BENCH_ARTIFACTS_DOCS=0).
 *
 * Environment: BENCH_ARTIFACTS_MIB (default 48 per variant per round), BENCH_ARTIFACTS_ROUNDS (default 3),
 * BENCH_ARTIFACTS_ONLY (variants to run, e.g. `node,store`: for profiles; prints the rounds, no table),
 * BENCH_BASELINE_REF=<commit> ("before"): that commit checked out in a temporary git worktree (removed at the end)
 * and its node loaded through tsx into this process beside this checkout's (artifacts/nodes.ts), written to by the
 * same client process as two more variants in the rounds (262,144-byte and 3-byte chunks), so before and after are
 * measured in one run.
 */
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import * as SqlArtifactStore from "../../layers/node/sql/SqlArtifactStore.js"
import * as SqlConversationStore from "../../layers/node/sql/SqlConversationStore.js"
import { maxChunkBytes } from "../../schema/node/Artifact.js"
import { ArtifactStore } from "../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../services/node/ConversationStore.js"
import type { RunMessage } from "./artifacts/client.js"
import { currentModules, loadModules, startNode } from "./artifacts/nodes.js"
import { measurePieces } from "./artifacts/pieces.js"
import { startChild, stopAll } from "./Children.js"
import { log, otherWorkCores, otherWorkLimit, positiveInt, root, writeDocs } from "./Common.js"
import { checkoutBaseline, removeBaseline } from "./node/builds.js"

const settings = {
  mib: positiveInt("BENCH_ARTIFACTS_MIB", 48),
  rounds: positiveInt("BENCH_ARTIFACTS_ROUNDS", 3),
  fileBytes: 24 * 1024 * 1024
}
const writesDocs = process.execArgv.every((flag) => !flag.startsWith("--cpu-prof")) && process.env.BENCH_ARTIFACTS_DOCS !== "0"

const chunk = Buffer.alloc(maxChunkBytes, 0x61)
const chunkBase64 = chunk.toString("base64")
const chunkBytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
const chunksPerRun = Math.ceil((settings.mib * 1024 * 1024) / maxChunkBytes)
const chunksPerFile = settings.fileBytes / maxChunkBytes
const mibOf = (chunks: number) => (chunks * maxChunkBytes) / (1024 * 1024)

const rawAppend = async (dir: string, sync: boolean) => {
  const started = performance.now()
  let handle: fs.promises.FileHandle | undefined
  for (let i = 0; i < chunksPerRun; i++) {
    if (i % chunksPerFile === 0) {
      await handle?.close()
      handle = await fs.promises.open(path.join(dir, `raw-${i}`), "a", 0o600)
    }
    await handle!.appendFile(chunk)
    if (sync) await handle!.datasync()
  }
  await handle?.close()
  const elapsed = performance.now() - started
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir)
  return elapsed
}

/** The client process: one `run` at a time, answered with its elapsed milliseconds. */
const startClient = () => {
  const child = startChild("chunk client", ["--import", "tsx", path.join(root, "scripts/bench/artifacts/client.ts")], {}, true)
  const next = () =>
    new Promise<any>((resolve, reject) => {
      child.process.once("message", resolve)
      child.exited.then(() => reject(new Error(`the chunk client exited: ${child.output.join("\n")}`)))
    })
  const ready = next()
  return {
    ready,
    run: async (message: RunMessage) => {
      const answer = next()
      child.process.send(message)
      const result = await answer
      if (result.kind !== "done") throw new Error(`the chunk client failed: ${result.message}`)
      return result.elapsed as number
    }
  }
}

/** The store alone on a data dir of its own (open until the run ends): begin, the chunks, discard, as the route does. */
const storeRun = (dataDir: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Layer.mergeAll(SqlArtifactStore.layer({ dataDir }), SqlConversationStore.layer).pipe(
        Layer.provideMerge(NodeDatabase.layer(dataDir))
      )
    )
    const store = yield* Effect.provide(ArtifactStore, context)
    const conversation = yield* Effect.provide(Effect.flatMap(ConversationStore, (c) => c.create("node_bench", null)), context)
    const owner = { conversationId: conversation.id, instanceId: "wi_bench", packageId: "@bench/files" }
    return Effect.gen(function*() {
      const started = performance.now()
      let artifactId = ""
      for (let i = 0; i < chunksPerRun; i++) {
        if (i % chunksPerFile === 0) {
          if (artifactId !== "") yield* store.discard(owner, artifactId)
          artifactId = (yield* store.begin(owner, { mimeType: "text/plain", name: "bench.txt" })).artifactId
        }
        yield* store.append(owner, artifactId, (i % chunksPerFile) * maxChunkBytes, chunkBytes)
      }
      const elapsed = performance.now() - started
      yield* store.discard(owner, artifactId)
      return elapsed
    }).pipe(Effect.orDie)
  })

type Variant = "node" | "baseline" | "floor" | "tiny" | "baselineTiny" | "nodeInProcess" | "store" | "synced" | "cached"

const main = Effect.gen(function*() {
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-store-"))
  const rawDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-raw-"))
  const node = yield* startNode(currentModules)
  const { baseUrl, headers, prefix, call } = node
  const baselineRef = process.env.BENCH_BASELINE_REF
  const baselineBuild = baselineRef === undefined || baselineRef === "none" ? undefined : checkoutBaseline(baselineRef)
  if (baselineBuild !== undefined) yield* Effect.addFinalizer(() => Effect.sync(removeBaseline))
  const baseline = baselineBuild === undefined
    ? undefined
    : yield* startNode(yield* Effect.promise(() => loadModules(baselineBuild.dir)))

  /** The client in the node's process: fetch and JSON.stringify per chunk, counted against the node. */
  const inProcessRun = Effect.gen(function*() {
    const started = performance.now()
    let artifactId = ""
    let offset = 0
    for (let i = 0; i < chunksPerRun; i++) {
      if (i % chunksPerFile === 0) {
        if (artifactId !== "") yield* call("DELETE", `${prefix}/${artifactId}`)
        artifactId = (yield* call("POST", prefix, { mimeType: "text/plain" })).artifactRef.artifactId
        offset = 0
      }
      yield* call("POST", `${prefix}/${artifactId}/chunks`, { offset, contentBase64: chunkBase64 })
      offset += maxChunkBytes
    }
    const elapsed = performance.now() - started
    yield* call("DELETE", `${prefix}/${artifactId}`)
    return elapsed
  })

  const client = startClient()
  yield* Effect.promise(() => client.ready)
  const message: RunMessage = { kind: "run", baseUrl, headers, prefix, chunks: chunksPerRun, chunksPerFile, chunkBytes: maxChunkBytes }
  const storeAppend = yield* storeRun(storeDir)

  const variants: Partial<Record<Variant, Effect.Effect<number>>> = {
    node: Effect.promise(() => client.run(message)),
    ...(baseline === undefined ? {} : {
      baseline: Effect.promise(() =>
        client.run({ ...message, baseUrl: baseline.baseUrl, headers: baseline.headers, prefix: baseline.prefix })
      ),
      baselineTiny: Effect.promise(() =>
        client.run({ ...message, baseUrl: baseline.baseUrl, headers: baseline.headers, prefix: baseline.prefix, chunkBytes: 3 })
      )
    }),
    floor: Effect.promise(() => client.run({ ...message, mode: "floor" })),
    tiny: Effect.promise(() => client.run({ ...message, chunkBytes: 3 })),
    nodeInProcess: inProcessRun,
    store: storeAppend,
    synced: Effect.promise(() => rawAppend(rawDir, true)),
    cached: Effect.promise(() => rawAppend(rawDir, false))
  }
  // BENCH_ARTIFACTS_ONLY=node (a comma-separated list) runs only those variants, e.g. under --cpu-prof; no table then.
  const only = (process.env.BENCH_ARTIFACTS_ONLY ?? "").split(",").filter((name) => name !== "")
  const names = (Object.keys(variants) as Array<Variant>).filter((name) => only.length === 0 || only.includes(name))
  const results = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Variant, Array<number>>
  /** CPU time of this process (all its threads) per round: what a variant costs, whatever the machine's load. */
  const cpu = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<Variant, Array<number>>
  const measured = (name: Variant) =>
    Effect.gen(function*() {
      const before = process.cpuUsage()
      const elapsed = yield* variants[name]!
      const used = process.cpuUsage(before)
      cpu[name].push((used.user + used.system) / 1000)
      return elapsed
    })

  // One warm-up of each (JIT, the first file, the client's connection), not counted.
  for (const name of names) yield* variants[name]!
  const loadavg = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(", ")
  const otherCores = yield* Effect.promise(() => otherWorkCores())
  log(`load average ${loadavg}; other work kept ${otherCores.toFixed(2)} of ${os.cpus().length} cores busy just before the run`)
  for (let round = 0; round < settings.rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!
      results[name].push(yield* measured(name))
    }
    log(`round ${round + 1}: ${
      names.map((name) => `${name} ${results[name].at(-1)!.toFixed(0)} ms (${(cpu[name].at(-1)! / chunksPerRun).toFixed(3)} ms CPU per chunk)`).join(", ")
    }`)
  }
  const cleanUp = Effect.promise(async () => {
    await stopAll()
    for (const dir of [storeDir, rawDir]) fs.rmSync(dir, { recursive: true, force: true })
  })
  if (only.length > 0) return yield* cleanUp
  const pieces = measurePieces()
  const mib = mibOf(chunksPerRun)
  const rate = (name: Variant) => mib / (Math.min(...results[name]) / 1000)
  const perChunk = (name: Variant) => Math.min(...results[name]) / chunksPerRun
  const cpuPerChunk = (name: Variant) => Math.min(...cpu[name]) / chunksPerRun
  const percent = (a: Variant, b: Variant) => `${((rate(a) / rate(b)) * 100).toFixed(0)} %`
  const row = (name: Variant, label: string) => `| ${label} | ${name === "floor" || name === "tiny" || name === "baselineTiny" ? "—" : rate(name).toFixed(1)} | ${perChunk(name).toFixed(2)} | ${cpuPerChunk(name).toFixed(2)} |`
  const idle = otherCores <= otherWorkLimit
  const section = [
    "## Artifact chunk writes (`npm run bench:artifacts`)",
    "",
    `${mib} MiB per variant per round in chunks of 262,144 bytes, ${settings.rounds} rounds taking the variants in turn, best`,
    `round of each; measured ${new Date().toISOString().slice(0, 10)}, load average ${loadavg}, other work on ${otherCores.toFixed(2)} of`,
    `${os.cpus().length} cores just before the run (${idle ? "an idle machine" : "a loaded machine: figures move several-fold between runs; compare within one run"}).`,
    "",
    "| writer | MiB/s | ms per chunk | CPU ms per chunk |",
    "|---|---|---|---|",
    row("node", "node: POST …/artifacts/{id}/chunks over HTTP, client in its own process"),
    ...(baselineBuild === undefined ? [] : [
      row("baseline", `the same on the baseline ${baselineBuild.commit} (BENCH_BASELINE_REF), in the same process`)
    ]),
    row("floor", "floor: as many GET /node over HTTP, client in its own process (a request without a body)"),
    row("tiny", "the chunk route with 3-byte chunks, client in its own process (all but the body's size)"),
    ...(baselineBuild === undefined ? [] : [
      row("baselineTiny", `the same with 3-byte chunks on the baseline ${baselineBuild.commit}`)
    ]),
    row("nodeInProcess", "node: the same, client in the node's process (fetch, JSON.stringify per chunk)"),
    row("store", "the store's append alone, in process (checks, write, datasync, row update)"),
    row("synced", "raw fs: appendFile + datasync per chunk (the same guarantee)"),
    row("cached", "raw fs: appendFile alone (page cache, nothing durable)"),
    "",
    `Node against raw durable appends in this run: ${percent("node", "synced")} (target at least 50 %)${
      baselineBuild === undefined ? "" : `; the baseline ${baselineBuild.commit} ${percent("baseline", "synced")}`
    }; with the client in`,
    `the node's process ${percent("nodeInProcess", "synced")}; the store alone ${percent("store", "synced")}; node against appends`,
    `that sync nothing: ${percent("node", "cached")}. CPU ms per chunk: this process's CPU time (all threads, user and`,
    "system, the least of the rounds) over the chunks; for the first row that is the node's alone (the client runs",
    "elsewhere). On a loaded machine it moves far less than the times do.",
    "",
    "Pieces of one chunk outside the store, timed in the same process right after the rounds (median of 200):",
    "",
    "| piece | ms |",
    "|---|---|",
    ...pieces.map((piece) => `| ${piece.label} | ${piece.ms.toFixed(3)} |`)
  ].join("\n")
  log(section)
  if (writesDocs) writeDocs("artifacts", section)
  yield* cleanUp
})

Effect.runPromise(Effect.scoped(main)).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
