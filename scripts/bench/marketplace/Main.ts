/** The run of `npm run bench:marketplace`, step by step (scripts/bench/marketplace.ts describes it). */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { stopAll, stopChild } from "../Children.js"
import { build, log, otherWorkCores, otherWorkLimit, seconds, writeDocs } from "../Common.js"
import * as LegacyPackageStore from "./LegacyPackageStore.js"
import { checkResponses, checkSqlParity, measureSql } from "./Parity.js"
import { measureServers } from "./Load.js"
import { otherWorkWindowMs, renderSection, searchRuns } from "./Report.js"
import { searchTable } from "./SearchReport.js"
import type { ScaleRow } from "./Scaling.js"
import { measureScaleSize } from "./ScalingRun.js"
import { seedBoth } from "./Seeding.js"
import { startBaseline, startMarketplace, startSearchServer } from "./Servers.js"
import { databaseUrl, int, partialRun, scaleSizes, scenarioIds, settings, withPg } from "./Settings.js"
import { buildScenarios, type Scenario, surveyCatalogue } from "./Workload.js"

const prefixScenario = "search-prefix"

const loadAverage = () => os.loadavg()[0] ?? 0

const logLoad = (when: string) => {
  const load = loadAverage()
  log(`  1-minute load average ${when}: ${load.toFixed(1)} on ${os.cpus().length} cores`)
  return load
}

/** Other work on the machine while ours waits; a warning when it would skew the figures. */
const checkOtherWork = async (when: string) => {
  const cores = await otherWorkCores(otherWorkWindowMs)
  log(
    `  other work ${when}: ${cores.toFixed(2)} cores` +
      (cores > otherWorkLimit ? "; warning: it will skew the figures" : "")
  )
  return cores
}

export const main = async () => {
  const started = Date.now()
  log(
    `Marketplace benchmark: ${int(settings.packages)} packages, ${settings.seconds} s per run, ${settings.connections} connections` +
      (settings.full ? " (BENCH_FULL=1)" : "") +
      (partialRun
        ? `; partial run (BENCH_DATABASES=${settings.databases.join(",")}, BENCH_SCENARIOS=${settings.scenarios.join(",")}): ` +
          "figures printed, docs/benchmarks.md left alone, no scaling table"
        : "")
  )
  const onPostgres = settings.databases.includes("postgres")
  const onSqlite = settings.databases.includes("sqlite")
  build("server")

  const postgresUrl = databaseUrl(settings.adminUrl, settings.databaseName)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-"))
  const sqliteUrl = `sqlite:${path.join(tmp, "marketplace.db")}`
  const dropDatabase = () =>
    withPg(settings.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${settings.databaseName} WITH (FORCE)`))

  try {
    log("Workload")
    const survey = surveyCatalogue(settings.packages)
    const every = buildScenarios(survey)
    if (every.map((s) => s.id).join() !== scenarioIds.join()) throw new Error("Settings.ts scenarioIds differ from Workload.ts")
    const scenarios = every.filter((s) => (settings.scenarios as ReadonlyArray<string>).includes(s.id))
    for (const s of scenarios) log(`  ${s.title}: ${s.paths.length} requests, e.g. ${s.paths[0]}`)
    const searches = scenarios.filter((s) => s.route === "search")
    // The word walk differs from the search table for 3-letter words only: it answers that scenario.
    const prefixOnly = scenarios.filter((s) => s.id === prefixScenario)
    const isSearch = (s: Scenario) => s.route === "search"
    const searchServers = { before: isSearch, after: isSearch, walk: (s: Scenario) => s.id === prefixScenario }
    const others = scenarios.filter((s) => s.route !== "search")
    // Search at the fixed rate goes over the searches run (every search when no search scenario is).
    const searchPaths = (searches.length > 0 ? searches : every.filter(isSearch)).flatMap((s) => s.paths)

    log("Seeding")
    await dropDatabase()
    await withPg(settings.adminUrl, (admin) => admin.query(`CREATE DATABASE ${settings.databaseName}`))
    const seeded = await seedBoth(onPostgres ? postgresUrl : undefined, onSqlite ? sqliteUrl : undefined, settings.packages)
    const analyzeStarted = Date.now()
    const postgresVersion = await withPg(postgresUrl, async (client) => {
      if (onPostgres) await client.query("VACUUM (ANALYZE)")
      // The load's write-ahead log written out now, not by a checkpoint that falls on the first measured runs.
      if (onPostgres) await client.query("CHECKPOINT")
      return String((await client.query("SHOW server_version")).rows[0]?.server_version ?? "?")
    })
    const analyze = Date.now() - analyzeStarted
    log(`  seeded PostgreSQL in ${seconds(seeded.postgres)} (+ ${seconds(analyze)} VACUUM ANALYZE and CHECKPOINT), SQLite in ${seconds(seeded.sqlite)}`)

    const postgresPart = async () => {
      log("Checking the baseline against the product (lists, detail) and against today's search SQL (searches)")
      await checkSqlParity(postgresUrl, others)
      await checkSqlParity(postgresUrl, searches, LegacyPackageStore.layer, "today's search SQL (LegacyPackageStore.ts)")
      const sql = await measureSql(postgresUrl, scenarios)

      log("PostgreSQL: the product with its read cache on and off, the baseline, and search before/after, taking turns")
      const pgOn = await startMarketplace("product, cache on (PostgreSQL)", postgresUrl, "on")
      const pgOff = await startMarketplace("product, cache off (PostgreSQL)", postgresUrl, "off")
      const plain = await startBaseline(postgresUrl)
      const pgBefore = await startSearchServer("before", postgresUrl, "today's search SQL (PostgreSQL)")
      const pgAfter = await startSearchServer("after", postgresUrl, "search table (PostgreSQL)")
      const pgWalk = await startSearchServer("walk", postgresUrl, "word walk (PostgreSQL)")
      await checkResponses(pgOff, others, plain)
      await checkResponses(pgBefore, searches, plain)
      await checkResponses(pgAfter, searches, pgOff)
      await checkResponses(pgWalk, prefixOnly, pgOff)
      const answerBytes = await checkResponses(pgOn, scenarios, pgOff, " (filling its cache)")
      await checkResponses(pgOn, scenarios, pgOff, " (from its cache)")
      const loadBefore = logLoad("before the PostgreSQL runs")
      const otherWorkPostgres = await checkOtherWork("before the PostgreSQL runs")
      const postgres = await measureServers(
        { on: pgOn, off: pgOff, baseline: plain, before: pgBefore, after: pgAfter, walk: pgWalk },
        scenarios,
        searchPaths,
        searchServers
      )
      for (const server of [pgOn, pgOff, plain, pgBefore, pgAfter, pgWalk]) await stopChild(server.child)
      return { sql, loadBefore, otherWorkPostgres, postgres, answerBytes }
    }

    const sqlitePart = async () => {
      log("SQLite: the product with its read cache on and off, and search before/after, taking turns")
      const sqliteOn = await startMarketplace("product, cache on (SQLite)", sqliteUrl, "on")
      const sqliteOff = await startMarketplace("product, cache off (SQLite)", sqliteUrl, "off")
      const sqliteBefore = await startSearchServer("before", sqliteUrl, "today's search SQL (SQLite)")
      const sqliteAfter = await startSearchServer("after", sqliteUrl, "search table (SQLite)")
      const sqliteWalk = await startSearchServer("walk", sqliteUrl, "word walk (SQLite)")
      await checkResponses(sqliteOff, scenarios)
      await checkResponses(sqliteBefore, searches)
      await checkResponses(sqliteAfter, searches, sqliteOff)
      await checkResponses(sqliteWalk, prefixOnly, sqliteOff)
      await checkResponses(sqliteOn, scenarios, sqliteOff, " (filling its cache)")
      await checkResponses(sqliteOn, scenarios, sqliteOff, " (from its cache)")
      const loadSqlite = logLoad("before the SQLite runs")
      const otherWorkSqlite = await checkOtherWork("before the SQLite runs")
      const sqlite = await measureServers(
        { on: sqliteOn, off: sqliteOff, before: sqliteBefore, after: sqliteAfter, walk: sqliteWalk },
        scenarios,
        searchPaths,
        searchServers
      )
      for (const server of [sqliteOn, sqliteOff, sqliteBefore, sqliteAfter, sqliteWalk]) await stopChild(server.child)
      return { loadSqlite, otherWorkSqlite, sqlite }
    }

    const pgPart = onPostgres ? await postgresPart() : undefined
    const sqlitePartRun = onSqlite ? await sqlitePart() : undefined
    const loadAfter = logLoad("after the runs")

    if (partialRun || pgPart === undefined || sqlitePartRun === undefined) {
      for (const [database, runs] of [["PostgreSQL", pgPart?.postgres], ["SQLite", sqlitePartRun?.sqlite]] as const) {
        if (runs !== undefined && searches.length > 0) log(`\n${database}, search:\n${searchTable(searchRuns(database, scenarios, runs)).text}`)
      }
      log(`Partial run: docs/benchmarks.md not written (${seconds(Date.now() - started)})`)
      return
    }
    const { answerBytes, loadBefore, otherWorkPostgres, postgres, sql } = pgPart
    const { loadSqlite, otherWorkSqlite, sqlite } = sqlitePartRun

    log("Scaling: search and list latency in-process by catalogue size")
    const scaling: Array<ScaleRow> = []
    for (const size of scaleSizes()) {
      scaling.push(...(await measureScaleSize(size, tmp, { postgres: postgresUrl, sqlite: sqliteUrl })).rows)
      log(`  ${int(size)} packages measured`)
    }

    const section = renderSection({
      date: new Date(),
      load: { before: loadBefore, sqlite: loadSqlite, after: loadAfter },
      otherWork: { postgres: otherWorkPostgres, sqlite: otherWorkSqlite },
      postgresVersion,
      publicPackages: survey.names.length,
      seeding: { postgres: seeded.postgres, analyze, sqlite: seeded.sqlite },
      scenarios,
      sql,
      answerBytes,
      postgres,
      sqlite,
      search: {
        postgres: searchRuns("PostgreSQL", scenarios, postgres),
        sqlite: searchRuns("SQLite", scenarios, sqlite)
      },
      scaling
    })
    log(`\n${section}`)
    log(`Written to ${writeDocs("marketplace", section)} after ${seconds(Date.now() - started)}`)
  } finally {
    await stopAll()
    await dropDatabase().catch((error: unknown) => console.error(`could not drop ${settings.databaseName}: ${String(error)}`))
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}
