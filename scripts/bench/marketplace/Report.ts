/** The marketplace section of docs/benchmarks.md. */
import * as os from "node:os"
import { defaultCacheOptions } from "../../../layers/marketplace/cache/CachedPackageStore.js"
import { poolSize } from "../baseline-server.js"
import { otherWorkLimit, seconds } from "../Common.js"
import type { Measurement, Run } from "./Load.js"
import type { SqlFigures } from "./Parity.js"
import { type ScaleRow, scalingTable } from "./Scaling.js"
import { searchSection, type SearchRuns } from "./SearchReport.js"
import { warningLogLevel } from "./Servers.js"
import { int, ms2, requestTimeoutSeconds, runWarmupSeconds, scaleRounds, settings, warmupSeconds } from "./Settings.js"
import type { Scenario } from "./Workload.js"

export const otherWorkWindowMs = 2000

interface Results {
  readonly date: Date
  /** 1-minute load averages when the measurements started, when the SQLite runs started, and at the end. */
  readonly load: { readonly before: number; readonly sqlite: number; readonly after: number }
  /** Cores busy with other work in a quiet moment before the PostgreSQL runs and before the SQLite runs. */
  readonly otherWork: { readonly postgres: number; readonly sqlite: number }
  readonly postgresVersion: string
  readonly publicPackages: number
  readonly seeding: { readonly postgres: number; readonly analyze: number; readonly sqlite: number }
  readonly scenarios: ReadonlyArray<Scenario>
  readonly sql: Map<string, SqlFigures>
  /** Total length of the answers to every rotated request (what the cache holds). */
  readonly answerBytes: number
  readonly postgres: { readonly on: Run; readonly off: Run; readonly baseline: Run }
  readonly sqlite: { readonly on: Run; readonly off: Run }
  readonly search: { readonly postgres: SearchRuns; readonly sqlite: SearchRuns }
  readonly scaling: ReadonlyArray<ScaleRow>
}

export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")

const exampleOf = (scenario: Scenario) => {
  const first = scenario.paths[0] ?? ""
  return scenario.route === "detail" ? `\`${first}\`` : `\`${first.replace("/api/v1", "")}\``
}

const workloadTable = (r: Results) =>
  table(
    ["Scenario", "Requests rotated", "First request", "Matching packages (median)"],
    r.scenarios.map((s) => [
      s.title,
      String(s.paths.length),
      exampleOf(s),
      r.sql.get(s.id)?.matches === undefined ? "1" : int(r.sql.get(s.id)!.matches!)
    ])
  )

export const latencies = (m: Measurement) => `${ms2(m.p50)} / ${ms2(m.p99)}`
const errorsOf = (m: Measurement) => (m.errors === 0 ? "0" : `${m.errors} (${m.errorKinds || "no detail"})`)
const percent = (share: number) => `${(share * 100).toFixed(0)} %`

/** One row per scenario, a pair of columns (req/s, p50 / p99) per run, then their errors. */
const runsTable = (
  r: Results,
  runs: ReadonlyArray<{ readonly name: string; readonly run: Run }>,
  sqlAlone: boolean
) =>
  table(
    [
      "Scenario",
      ...(sqlAlone ? ["SQL alone (ms)"] : []),
      ...runs.flatMap(({ name }) => [`${name} req/s`, `${name} p50 / p99 (ms)`]),
      `Errors (${runs.map(({ name }) => name.toLowerCase()).join(" / ")})`
    ],
    r.scenarios.map((s) => {
      const measured = runs.map(({ run }) => run.scenarios.get(s.id)!)
      return [
        s.title,
        ...(sqlAlone ? [ms2(r.sql.get(s.id)!.sqlMs)] : []),
        ...measured.flatMap((m) => [int(m.requestsPerSecond), latencies(m)]),
        measured.map(errorsOf).join(" / ")
      ]
    })
  )

/**
 * Scenarios where the product and the baseline send the same SQL. Searches are not among them any more: the
 * baseline keeps today's search SQL (it is the "before" of the search figures), the product has the search table.
 */
const likeForLike = (r: Results) => r.scenarios.filter((s) => s.route !== "search")

/** Each like-for-like scenario's throughput as a share of the baseline's. */
const sharesOf = (r: Results, run: Run) =>
  likeForLike(r).map((s) => run.scenarios.get(s.id)!.requestsPerSecond / r.postgres.baseline.scenarios.get(s.id)!.requestsPerSecond)

const shareSummary = (shares: ReadonlyArray<number>) => {
  const lowest = Math.min(...shares)
  const geometricMean = Math.exp(shares.reduce((sum, x) => sum + Math.log(x), 0) / shares.length)
  return { met: lowest >= settings.baselineRatioTarget, text: `lowest ${percent(lowest)}, geometric mean ${percent(geometricMean)}` }
}

const verdict = (met: boolean) => (met ? "**met**" : "**not met**")

const baselineTable = (r: Results) => {
  const off = sharesOf(r, r.postgres.off)
  const on = sharesOf(r, r.postgres.on)
  const share = (x: number) => `${percent(x)}${x < settings.baselineRatioTarget ? " (below target)" : ""}`
  return table(
    [
      "Scenario",
      "Baseline req/s (no cache)",
      "Cache off req/s",
      "Framework alone: cache off / baseline",
      "Cache on req/s",
      "As shipped: cache on / baseline"
    ],
    likeForLike(r).map((s, i) => [
      s.title,
      int(r.postgres.baseline.scenarios.get(s.id)!.requestsPerSecond),
      int(r.postgres.off.scenarios.get(s.id)!.requestsPerSecond),
      share(off[i]!),
      int(r.postgres.on.scenarios.get(s.id)!.requestsPerSecond),
      share(on[i]!)
    ])
  )
}

/** A server at the fixed rate sends fewer requests when its answers take longer than the pace allows. */
const keptUp = (m: Measurement) => m.requestsPerSecond >= settings.fixedRate * 0.95

const fixedRateTable = (r: Results) => {
  const target = (m: Measurement) => verdict(m.p99 <= settings.searchP99TargetMs)
  const rows: ReadonlyArray<readonly [string, string, Measurement, string]> = [
    ["product, PostgreSQL", "on (as shipped)", r.postgres.on.fixedRate, `${target(r.postgres.on.fixedRate)} (as shipped)`],
    ["product, PostgreSQL", "off", r.postgres.off.fixedRate, `${target(r.postgres.off.fixedRate)} (framework alone)`],
    ["baseline, PostgreSQL", "none", r.postgres.baseline.fixedRate, "(for reference)"],
    ["product, SQLite", "on (as shipped)", r.sqlite.on.fixedRate, "(for reference)"],
    ["product, SQLite", "off", r.sqlite.off.fixedRate, "(for reference)"]
  ]
  return table(
    ["Server", "Read cache", "Achieved req/s", "p50 (ms)", "p99 (ms)", "errors", `Target p99 ≤ ${settings.searchP99TargetMs} ms`],
    rows.map(([server, cache, m, judged]) => [
      server,
      cache,
      `${int(m.requestsPerSecond)}${keptUp(m) ? "" : " (fell behind)"}`,
      ms2(m.p50),
      ms2(m.p99),
      errorsOf(m),
      judged
    ])
  )
}

/** Other processes were busy when the runs started (ours were idle then): the figures understate the code. */
const busyWarning = (r: Results) =>
  Math.max(r.otherWork.postgres, r.otherWork.sqlite) > otherWorkLimit
    ? ` **Other work was running on the machine when the measurements started: these figures understate what the code can do; rerun on an idle machine before comparing.**`
    : ""

export const renderSection = (r: Results) => {
  const cpus = os.cpus()
  const framework = shareSummary(sharesOf(r, r.postgres.off))
  const shipped = shareSummary(sharesOf(r, r.postgres.on))
  const distinct = r.scenarios.reduce((n, s) => n + s.paths.length, 0)
  const searches = r.scenarios.filter((s) => s.route === "search")
  const searchCount = searches.reduce((n, s) => n + s.paths.length, 0)
  const atRate = (m: Measurement) =>
    `p99 ${ms2(m.p99)} ms, ${int(m.requestsPerSecond)} req/s achieved${keptUp(m) ? "" : `: it fell behind the ${settings.fixedRate} req/s pace`}`
  const cacheLimit = `${int(defaultCacheOptions.maxEntries)} answers or ${int(defaultCacheOptions.maxBytes / 2 ** 20)} MiB`
  return `## Marketplace read API

Written by \`npm run bench:marketplace\` (scripts/bench/marketplace.ts) on ${r.date.toISOString().slice(0, 16).replace("T", " ")} UTC.

- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}; Node ${process.version}; PostgreSQL ${r.postgresVersion}. The load generator, the servers and PostgreSQL share these cores.
- System load (1-minute average): ${r.load.before.toFixed(1)} when the measurements started, ${r.load.sqlite.toFixed(1)} when the SQLite runs started, ${r.load.after.toFixed(1)} when they ended, on ${cpus.length} cores; the benchmark's own processes account for about 3 of it at full speed. Other work, measured over ${otherWorkWindowMs / 1000} s in which the benchmark's processes waited just before each database's runs: ${r.otherWork.postgres.toFixed(2)} cores before PostgreSQL's, ${r.otherWork.sqlite.toFixed(2)} before SQLite's.${busyWarning(r)}
- Data: ${int(settings.packages)} synthetic packages (\`seedSynthetic\`, seed 1), ${int(r.publicPackages)} of them public. Seeding took ${seconds(r.seeding.postgres)} on PostgreSQL (then ${seconds(r.seeding.analyze)} of \`VACUUM (ANALYZE)\`, the state autovacuum reaches by itself after a bulk load, and a \`CHECKPOINT\`, so that the load's write-ahead log is not written out during the first runs) and ${seconds(r.seeding.sqlite)} on SQLite (a file under the temporary directory, no ANALYZE: the product never runs one).
- Servers: the compiled product (\`node bin/clark.js marketplace serve\`, \`LOG_LEVEL=${warningLogLevel}\`, pool of ${poolSize}) twice on each database, **as shipped (read cache on, the default)** and **with \`MARKETPLACE_READ_CACHE=off\`**; on PostgreSQL also the baseline, scripts/bench/baseline-server.ts, plain \`node:http\` + \`pg\` with a pool of ${poolSize} and **no cache**. Before the runs the baseline was checked to send the very SQL text the product sends, and both product servers to answer bodies equal to the baseline's (on SQLite, to each other's); the cache-on server was checked twice, filling its cache and answering from it.
- Read cache: as shipped, the product keeps package reads in memory (up to ${cacheLimit}) until the catalogue version moves, and still asks the database for that version on every read (on PostgreSQL one primary-key lookup). The workload rotates through ${int(distinct)} distinct requests (${(r.answerBytes / 2 ** 20).toFixed(1)} MiB of answers, within those limits), the body checks read each of them before the runs, and nothing writes during the runs: **every cache-on request measured here is a cache hit, by construction**. Traffic with many distinct queries, or a catalogue that changes often, lands between the cache-on and the cache-off figures. The cache-off product runs the same SQL as the baseline for every request: it is the like-for-like measure of the framework's cost.
- Load: autocannon in the driver process, ${settings.connections} connections at full speed for ${settings.seconds} s per scenario and server, each connection rotating through the scenario's requests; the servers of one database take turns scenario by scenario; a ${warmupSeconds} s warm-up over every scenario before each server's first run${runWarmupSeconds > 0 ? `, and before each measured run ${runWarmupSeconds} s of the same scenario on the same server, unmeasured (BENCH_RUN_WARMUP: each server waits idle through the others' runs, and its first second back is not the sustained load the targets are stated for)` : ""}. Latencies are per response with sub-millisecond precision. Every run had 0 non-2xx responses (the benchmark fails otherwise); "errors" counts connection-level failures (resets; timeouts after ${requestTimeoutSeconds} s), reported but not fatal. Before each run the driver waits until the server has drained the previous run's backlog.

### Workload

${workloadTable(r)}

### PostgreSQL

"Cache on" is the product as shipped, "cache off" the product with \`MARKETPLACE_READ_CACHE=off\`, "baseline" plain \`node:http\` + \`pg\` (no cache). "SQL alone" is the median time of the scenario's statements run one at a time on one idle connection.

${
    runsTable(r, [{ name: "Cache on", run: r.postgres.on }, { name: "Cache off", run: r.postgres.off }, {
      name: "Baseline",
      run: r.postgres.baseline
    }], true)
  }

### SQLite

The product as shipped ("cache on") and with \`MARKETPLACE_READ_CACHE=off\`; there is no SQLite baseline.

${runsTable(r, [{ name: "Cache on", run: r.sqlite.on }, { name: "Cache off", run: r.sqlite.off }], false)}

### Framework against the plain baseline (PostgreSQL)

Target: framework throughput ≥ ${settings.baselineRatioTarget * 100} % of the baseline's in every scenario where both send the same SQL: lists and detail. Searches are left out here: the baseline keeps today's search SQL, the "before" of the search section below, while the product searches the search table. The baseline has no cache, so the target is judged twice:

- **Framework alone** (product with \`MARKETPLACE_READ_CACHE=off\`; it and the baseline run the same SQL for these requests): ${verdict(framework.met)} (${framework.text}). This is the framework's own cost.
- **Product as shipped** (read cache on, against the same uncached baseline): ${verdict(shipped.met)} (${shipped.text}). Whatever this adds over the framework-alone figure is the cache answering repeated reads from memory, not framework speed; it is not a like-for-like comparison.

${baselineTable(r)}

### Search at a fixed ${settings.fixedRate} req/s

GET /api/v1/search rotating through the ${searchCount} distinct search requests above (${searches.map((s) => s.paths.length).join(" + ")}, one set per search scenario), ${settings.fixedRate} req/s paced evenly (one request every ${ms2(1000 / settings.fixedRate)} ms, open loop, over a keep-alive pool of up to ${settings.connections} sockets) for ${settings.seconds} s${runWarmupSeconds > 0 ? `, after ${runWarmupSeconds} s of the same paced load, unmeasured (BENCH_RUN_WARMUP)` : ""}; latency counts from the moment each request was due, so waiting to be sent is included. With the cache on, all ${searchCount} answers are in memory before the run starts and stay there, so every request is a hit (one version lookup, no search): a hit rate of 100 % by construction, far above what varied real queries would give. A search the cache does not hold costs what the cache-off row shows. A server slower than the pace answers fewer than ${settings.fixedRate} requests a second ("fell behind"), and the requests queued behind it show in its latencies.

Target on PostgreSQL: p99 ≤ ${settings.searchP99TargetMs} ms at ${int(settings.packages)} packages.

- **Product as shipped** (cache on): ${verdict(r.postgres.on.fixedRate.p99 <= settings.searchP99TargetMs)} (${atRate(r.postgres.on.fixedRate)}).
- **Framework alone** (cache off, every search runs its SQL): ${verdict(r.postgres.off.fixedRate.p99 <= settings.searchP99TargetMs)} (${atRate(r.postgres.off.fixedRate)}); the baseline, for reference: ${atRate(r.postgres.baseline.fixedRate)}.

${fixedRateTable(r)}

${searchSection({ settings, search: r.search })}

### Scaling: search and list latency by catalogue size

Each store called in-process (no HTTP, no framework), one request at a time on an otherwise idle database, every request of the scenario ${scaleRounds} times after one warm round; p50 / p99 of those calls. The searches also show today's search SQL (LegacyPackageStore.ts) on the same database, and the 3-letter prefix also the word walk that the prefix table (migration 0009) replaced. The words are drawn from each size's own catalogue the way the workload above draws them. Sizes: ${r.scaling.map((row) => int(row.size)).filter((x, i, all) => all.indexOf(x) === i).join(", ")}${settings.full ? "" : " (1,000,000 with `BENCH_FULL=1` or `BENCH_SCALE`)"}.

${scalingTable(r.scaling, r.scenarios)}
`
}

export const searchRuns = (
  database: "PostgreSQL" | "SQLite",
  scenarios: ReadonlyArray<Scenario>,
  runs: { readonly before: Run; readonly after: Run; readonly off: Run; readonly walk: Run }
): SearchRuns => ({
  database,
  scenarios: scenarios.filter((s) => s.route === "search"),
  before: runs.before.scenarios,
  after: runs.after.scenarios,
  walk: runs.walk.scenarios,
  product: runs.off.scenarios
})
