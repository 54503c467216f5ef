/**
 * `npm run bench:search-cpu`: the CPU one uncached search costs, in the marketplace server and in PostgreSQL, per
 * request, under the marketplace benchmark's load (autocannon, 50 connections, the search scenarios of
 * scripts/bench/marketplace/Workload.ts on the synthetic catalogue). CPU time, unlike latency, is hardly moved by
 * other work on the machine, so it is the figure to compare builds and settings by while the machine is shared.
 *
 * Servers: the compiled product (`bin/clark.js marketplace serve`, read cache and rate limits off) of this checkout,
 * and with BENCH_BASELINE_REF the same from that commit (a temporary worktree, built with its own `npm run build`),
 * each under every NODE_OPTIONS variant of BENCH_NODE_VARIANTS. They take turns run by run, so a change in the
 * machine's load falls on all of them alike. Per run: the server's user + system time (/proc, 10 ms ticks) and,
 * on PostgreSQL, that of the database's backends (the servers take turns, so it is this server's backends' work)
 * divided by the requests answered; req/s, p50 and p99 are printed beside them but mean little on a busy machine.
 *
 * Environment: BENCH_PACKAGES (default 100000), BENCH_DATABASES (postgres, sqlite; both by default),
 * BENCH_SCENARIOS (search-common, search-rare, search-two, search-prefix; default search-common,search-prefix),
 * BENCH_SECONDS per run (default 5), BENCH_ROUNDS (default 3; medians are printed), BENCH_BASELINE_REF (a
 * commit; default none) or BENCH_BASELINE_DIR (a checkout already built, run as it is), BENCH_BUILD=0 (skips this
 * checkout's `npm run build`), BENCH_NODE_VARIANTS (`label=flags;label=flags`, default `default=`: NODE_OPTIONS per
 * variant, e.g. `default=;semi32=--max-semi-space-size=32`), BENCH_PRODUCT_NODE_OPTIONS (added to every
 * variant, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`), BENCH_SEARCH_DATA (a directory that keeps the seeded
 * SQLite file and marks the PostgreSQL database `clark_search_cpu` as seeded, so later runs skip the seeding;
 * default: a temporary directory, both dropped at the end). The bulk seeder writes the catalogue.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { killAll, stopAll, stopChild } from "./Children.js"
import { log, positiveInt, root, seconds } from "./Common.js"
import { load } from "./marketplace/Load.js"
import { bulkSeed } from "./marketplace/BulkSeed.js"
import { checkoutBaseline, removeBaseline } from "./node/builds.js"
import { productNodeOptions, type Server, startMarketplace } from "./marketplace/Servers.js"
import { databaseUrl, int, median, ms2, settings as marketSettings, withPg } from "./marketplace/Settings.js"
import { buildScenarios, type Scenario, surveyCatalogue } from "./marketplace/Workload.js"

const searchIds = ["search-common", "search-rare", "search-two", "search-prefix"]

const settings = {
  packages: positiveInt("BENCH_PACKAGES", 100_000),
  seconds: positiveInt("BENCH_SECONDS", 5),
  rounds: positiveInt("BENCH_ROUNDS", 3),
  databases: (process.env.BENCH_DATABASES ?? "postgres,sqlite").split(",").map((x) => x.trim()).filter((x) => x !== ""),
  scenarios: (process.env.BENCH_SCENARIOS ?? "search-common,search-prefix").split(",").map((x) => x.trim()),
  baselineRef: (process.env.BENCH_BASELINE_REF ?? "").trim() || undefined,
  /** A checkout already built (`npm run build`) to run as the baseline instead of BENCH_BASELINE_REF's. */
  baselineDir: (process.env.BENCH_BASELINE_DIR ?? "").trim() || undefined,
  build: process.env.BENCH_BUILD !== "0",
  variants: (process.env.BENCH_NODE_VARIANTS ?? "default=").split(";").filter((x) => x.trim() !== "").map((entry) => {
    const at = entry.indexOf("=")
    return at === -1 ? { label: entry.trim(), flags: "" } : { label: entry.slice(0, at).trim(), flags: entry.slice(at + 1).trim() }
  }),
  dataDir: (process.env.BENCH_SEARCH_DATA ?? "").trim() || undefined
}
for (const id of settings.scenarios) if (!searchIds.includes(id)) throw new Error(`BENCH_SCENARIOS: ${id} is not one of ${searchIds.join(", ")}`)
for (const db of settings.databases) if (db !== "postgres" && db !== "sqlite") throw new Error(`BENCH_DATABASES: ${db}`)

const databaseName = "clark_search_cpu"

/** User + system CPU of a process, in µs (clock ticks of 10 ms); 0 once it is gone. */
const cpuMicros = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return 0
  }
}

/**
 * The backends of this benchmark's database (other work may use the same PostgreSQL): the servers' pools keep
 * their connections, so the same backends serve a whole run.
 */
const backendPids = (url: string) =>
  withPg(url, async (client) =>
    (await client.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"))
      .rows.map((row: { pid: number }) => Number(row.pid)))

const postgresCpuMicros = (pids: ReadonlyArray<number>): number => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0)

interface Contender {
  readonly label: string
  readonly dir: string
  readonly flags: string
}

interface Sample {
  readonly serverUs: number
  readonly postgresUs: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
}

const npmBuild = (dir: string) => {
  const started = Date.now()
  const result = spawnSync("npm", ["run", "--silent", "build"], { cwd: dir, stdio: "inherit" })
  if (result.status !== 0) throw new Error(`npm run build in ${dir} failed (${result.status ?? result.signal})`)
  log(`  built ${dir} in ${seconds(Date.now() - started)}`)
}

const seedIfNeeded = async (database: "postgres" | "sqlite", url: string, marker: string | undefined) => {
  if (marker !== undefined && fs.existsSync(marker)) {
    log(`  ${database}: seeded earlier (${marker})`)
    return
  }
  const started = Date.now()
  await bulkSeed(url, settings.packages)
  if (database === "postgres") await withPg(url, (client) => client.query("VACUUM (ANALYZE)"))
  log(`  ${database}: ${int(settings.packages)} packages seeded in ${seconds(Date.now() - started)}`)
  if (marker !== undefined) fs.writeFileSync(marker, `${settings.packages}\n`)
}

const measure = async (server: Server, scenario: Scenario, postgresUrl: string | undefined): Promise<Sample> => {
  const pid = server.child.process.pid!
  const pids = postgresUrl === undefined ? [] : await backendPids(postgresUrl)
  const onPostgres = postgresUrl !== undefined
  // The settle inside `load` runs first; the CPU counted from here includes its few health checks (negligible).
  const serverBefore = cpuMicros(pid)
  const postgresBefore = onPostgres ? postgresCpuMicros(pids) : 0
  const m = await load(server, scenario.paths, { duration: settings.seconds })
  const serverUs = (cpuMicros(pid) - serverBefore) / m.total
  const postgresUs = onPostgres ? (postgresCpuMicros(pids) - postgresBefore) / m.total : 0
  return { serverUs, postgresUs, rps: m.requestsPerSecond, p50: m.p50, p99: m.p99 }
}

const main = async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-search-cpu-"))
  const dataDir = settings.dataDir ?? tmp
  fs.mkdirSync(dataDir, { recursive: true })
  const postgresUrl = databaseUrl(marketSettings.adminUrl, databaseName)
  const sqliteUrl = `sqlite:${path.join(dataDir, "marketplace.db")}`
  const keep = settings.dataDir !== undefined
  try {
    log(`Search CPU per request: ${int(settings.packages)} packages, ${settings.seconds} s per run, ${settings.rounds} rounds`)
    const checkedOut = settings.baselineRef === undefined || settings.baselineDir !== undefined
      ? undefined
      : checkoutBaseline(settings.baselineRef)
    if (settings.build) npmBuild(root)
    if (checkedOut !== undefined) npmBuild(checkedOut.dir)
    const baseline = checkedOut ?? (settings.baselineDir === undefined ? undefined : { commit: path.basename(settings.baselineDir), dir: settings.baselineDir })
    const builds = [{ label: "this checkout", dir: root }, ...(baseline === undefined ? [] : [{ label: `baseline ${baseline.commit}`, dir: baseline.dir }])]
    const contenders: Array<Contender> = builds.flatMap((build) =>
      settings.variants.map((variant) => ({
        label: `${build.label}${settings.variants.length > 1 ? ` [${variant.label}]` : ""}`,
        dir: build.dir,
        flags: [variant.flags, productNodeOptions ?? ""].join(" ").trim()
      }))
    )
    const scenarios = buildScenarios(surveyCatalogue(settings.packages)).filter((s) => settings.scenarios.includes(s.id))

    for (const database of settings.databases as Array<"postgres" | "sqlite">) {
      log(`\n${database}`)
      const url = database === "postgres" ? postgresUrl : sqliteUrl
      const marker = keep ? path.join(dataDir, `${database}.seeded`) : undefined
      if (database === "postgres" && (marker === undefined || !fs.existsSync(marker))) {
        await withPg(marketSettings.adminUrl, async (admin) => {
          await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`)
          await admin.query(`CREATE DATABASE ${databaseName}`)
        })
      }
      await seedIfNeeded(database, url, marker)
      const servers: Array<Server> = []
      for (const c of contenders) {
        servers.push(await startMarketplace(c.label, url, "off", { cwd: c.dir, nodeOptions: c.flags === "" ? undefined : c.flags }))
      }
      // Warm-up: every path of every scenario, on every server (plans, JIT, the pool's connections).
      for (const server of servers) {
        await load(server, scenarios.flatMap((s) => s.paths), { duration: 2 })
      }
      const samples = new Map<string, Array<Sample>>()
      for (let round = 0; round < settings.rounds; round++) {
        for (const scenario of scenarios) {
          for (const server of servers) {
            const s = await measure(server, scenario, database === "postgres" ? url : undefined)
            const key = `${scenario.id}\t${server.label}`
            samples.set(key, [...(samples.get(key) ?? []), s])
            log(
              `  round ${round + 1} ${scenario.id.padEnd(14)} ${server.label.padEnd(40)} server ${int(s.serverUs)} µs/req` +
                (database === "postgres" ? `, postgres ${int(s.postgresUs)} µs/req` : "") +
                `, ${int(s.rps)} req/s, p50 ${ms2(s.p50)} ms, p99 ${ms2(s.p99)} ms`
            )
          }
        }
      }
      log(`\n${database}: medians of ${settings.rounds} rounds`)
      log(`| scenario | server | server µs/req | PostgreSQL µs/req | req/s | p50 ms | p99 ms |`)
      log(`|---|---|--:|--:|--:|--:|--:|`)
      for (const [key, list] of samples) {
        const [scenario, label] = key.split("\t")
        const m = (f: (s: Sample) => number) => median(list.map(f))
        log(
          `| ${scenario} | ${label} | ${int(m((s) => s.serverUs))} | ${database === "postgres" ? int(m((s) => s.postgresUs)) : "–"} | ` +
            `${int(m((s) => s.rps))} | ${ms2(m((s) => s.p50))} | ${ms2(m((s) => s.p99))} |`
        )
      }
      for (const server of servers) await stopChild(server.child)
    }
  } finally {
    await stopAll()
    if (!keep) {
      if (settings.databases.includes("postgres")) {
        await withPg(marketSettings.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`)).catch(() => {})
      }
    }
    fs.rmSync(tmp, { recursive: true, force: true })
    removeBaseline()
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
    removeBaseline()
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
