/**
 * `npm run bench:indexer`: indexing throughput of BENCH_INDEXER_PACKAGES (default 200; 1,000 for the full size) small versions
 * served by the registry stand-in on 127.0.0.1, with the time split between fetch, verify, unpack and store,
 * beside a baseline that only downloads the same packuments and tarballs and hashes them (sha512), in the same
 * run and at the same concurrency (BENCH_INDEXER_WORKERS, default 4). The database is a fresh SQLite file unless
 * BENCH_INDEXER_DATABASE names a PostgreSQL database (postgres://…, emptied first: use a scratch one).
 */
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Layer, ManagedRuntime, Option, Scope } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Live from "../../layers/marketplace/indexer/Live.js"
import * as Database from "../../layers/marketplace/sql/Database.js"
import { queuedJobRow } from "../../layers/marketplace/sql/SqlIndexQueue.js"
import { type IndexOutcome, Indexer } from "../../services/marketplace/Indexer.js"
import { defaultRetryPolicy } from "../../services/marketplace/Indexing.js"
import { packClark } from "../../test/support/registry/ClarkPackages.js"
import * as Registry from "../../test/support/registry/Registry.js"
import { log, otherWorkCores, otherWorkLimit, positiveInt, writeDocs } from "./Common.js"

// 1,000 (the issue's size) is BENCH_INDEXER_PACKAGES=1000; the default keeps a run on a loaded machine under 5 minutes.
const count = positiveInt("BENCH_INDEXER_PACKAGES", 200)
const workers = positiveInt("BENCH_INDEXER_WORKERS", 4)

/** User and system CPU of this process (both sides of every request: the stand-in runs in it too), in ms. */
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000

const main = async () => {
  const loadAtStart = os.loadavg()
  // Measured before anything of ours runs: the figures of a run on a busy machine are marked as such.
  const others = await otherWorkCores()
  const scope = Effect.runSync(Scope.make())
  const registry = await Effect.runPromise(Scope.extend(Registry.start, scope))
  const names = Array.from({ length: count }, (_, i) => `bench-pkg-${String(i).padStart(5, "0")}`)
  const packStarted = performance.now()
  for (const name of names) {
    registry.publish({ name, version: "1.0.0", tarball: await packClark({ name, version: "1.0.0", readme: `# ${name}\n\nA package for the benchmark.\n` }) })
  }
  log(`packed ${count} packages in ${((performance.now() - packStarted) / 1000).toFixed(1)} s`)

  // Baseline: the same GETs and a sha512 of each tarball, `workers` at a time.
  const baselineStarted = performance.now()
  const baselineCpu = process.cpuUsage()
  let next = 0
  await Promise.all(Array.from({ length: workers }, async () => {
    while (next < names.length) {
      const name = names[next++]!
      const packument = await (await fetch(`${registry.url}/${name}`, { headers: { accept: "application/json" } })).json() as any
      const bytes = Buffer.from(await (await fetch(packument.versions["1.0.0"].dist.tarball)).arrayBuffer())
      createHash("sha512").update(bytes).digest("base64")
    }
  }))
  const baselineMs = performance.now() - baselineStarted
  const baselineCpuMs = cpuMs(process.cpuUsage(baselineCpu))

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-indexer-"))
  const url = process.env.BENCH_INDEXER_DATABASE ?? `sqlite:${path.join(dir, "marketplace.db")}`
  const parsed = Database.parseDatabaseUrl(url)
  if (parsed === undefined) throw new Error("BENCH_INDEXER_DATABASE must be sqlite:PATH or postgres://…")
  const runtime = ManagedRuntime.make(
    Live.indexer({
      registryUrl: Option.some(new URL(registry.url)),
      workers: 0,
      pollInterval: Duration.millis(50),
      recheckInterval: Option.none(),
      leaseMillis: 600_000,
      retry: defaultRetryPolicy
    }).pipe(Layer.provideMerge(Database.layer(parsed)))
  )
  const now = new Date().toISOString()
  await runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DELETE FROM index_jobs`
    for (const [i, name] of names.entries()) {
      yield* sql`INSERT INTO index_jobs ${sql.insert(queuedJobRow(`ixj_bench${i}`, name, "1.0.0", "reindex", now))}`
    }
  }))
  const outcomes: Array<IndexOutcome> = []
  const oursStarted = performance.now()
  const oursCpu = process.cpuUsage()
  const oursLoop = performance.eventLoopUtilization()
  await runtime.runPromise(Effect.gen(function*() {
    const indexer = yield* Indexer
    yield* Effect.all(Array.from({ length: workers }, (_, w) =>
      Effect.gen(function*() {
        while (true) {
          const outcome = yield* indexer.runOnce(`bench-${w}`)
          if (Option.isNone(outcome)) return
          outcomes.push(outcome.value)
        }
      })), { concurrency: "unbounded" })
  }))
  const oursMs = performance.now() - oursStarted
  const oursCpuMs = cpuMs(process.cpuUsage(oursCpu))
  const loopBusy = performance.eventLoopUtilization(oursLoop).utilization
  await runtime.dispose()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })

  const indexed = outcomes.filter((o) => o.result === "indexed").length
  if (indexed !== count) throw new Error(`indexed ${indexed} of ${count}: ${JSON.stringify(outcomes.find((o) => o.result !== "indexed"))}`)
  const total = (stage: keyof IndexOutcome["timings"]) => outcomes.reduce((sum, o) => sum + o.timings[stage], 0)
  const perVersion = (ms: number) => (ms / count).toFixed(2)
  const stages = (["fetch", "verify", "unpack", "store"] as const).map((stage) => `| ${stage} | ${perVersion(total(stage))} |`)
  const rate = (ms: number) => (count / (ms / 1000)).toFixed(0)
  const database = parsed._tag === "Sqlite" ? "SQLite" : "PostgreSQL"
  const section = `## Indexer on ${database} (\`npm run bench:indexer\`${parsed._tag === "Sqlite" ? "" : ", BENCH_INDEXER_DATABASE=postgres://…"})

${count} small package versions (a skill package of 3 files, ~1 KiB gzipped) served by the registry stand-in on
127.0.0.1, ${workers} at a time, database ${parsed._tag === "Sqlite" ? "SQLite (a fresh file)" : "PostgreSQL (emptied first)"}, ${new Date().toISOString().slice(0, 10)}. Other work kept
${others.toFixed(2)} of ${os.cpus().length} cores busy just before the run${others > otherWorkLimit ? " (a loaded machine: figures understated)" : " (an idle machine)"}: compare the two rows of one run, not runs of different days.
Machine load (\`/proc/loadavg\`, 1/5/15 min) at the start: ${loadAtStart.map((l) => l.toFixed(2)).join(" ")}; at the end:
${os.loadavg().map((l) => l.toFixed(2)).join(" ")}.

| run | wall time | versions/s | CPU ms per version |
| --- | --- | --- | --- |
| baseline: GET packument + tarball, sha512 | ${(baselineMs / 1000).toFixed(1)} s | ${rate(baselineMs)} | ${perVersion(baselineCpuMs)} |
| indexer: claim, download + verify, read tarball, analyse, write | ${(oursMs / 1000).toFixed(1)} s | ${rate(oursMs)} | ${perVersion(oursCpuMs)} |

CPU is this process's user + system time (the stand-in registry serves from the same process, so both sides of
every request count, in both rows). The event loop was busy ${(loopBusy * 100).toFixed(0)}% of the indexer's run: the
workers share one thread, so once it is near 100% more workers cannot add throughput.

What limits it (CPU profiles and timings, issue 17 point 9): the indexer is CPU-bound on the process's one
thread, not waiting. HTTP keep-alive works (14 connections for 800 requests), nothing retries or sleeps, the
claim loop never polls while jobs are due, and SQLite (one connection) has no lock waits. A version costs about
four times the baseline's CPU: the two GETs through the Effect HTTP client (each body was read through a
per-chunk stream, 1.6 ms CPU per GET, now read in one piece when its length is declared, 0.6 ms), the catalogue
write (about 15 statements and a commit whose fsync blocks the thread), the tar pass (one now, two before), the
manifest and readme analysis, and the Effect runtime's own steps (a third of the profile's samples). So on
SQLite more workers in one process add nothing; more throughput needs less CPU per version.
The stage times below are wall times: with several workers each includes waiting for the others' work on the
one thread (which is why fetch looks large). PostgreSQL is limited elsewhere: docs/decisions.md, "Indexer
throughput".

Time per version inside the indexer (ms, summed over workers, so it exceeds wall time / versions when workers
overlap): fetch is the packument and tarball GETs, verify the signature/provenance checks and the sha512 compare,
unpack the decompression, listing pass, in-memory read and manifest/readme analysis, store the write through the
catalogue importer in one transaction.

| stage | ms per version |
| --- | --- |
${stages.join("\n")}
`
  log(section)
  writeDocs(`indexer-${database.toLowerCase()}`, section)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
