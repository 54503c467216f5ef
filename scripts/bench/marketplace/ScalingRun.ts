/**
 * The scaling table's sizes: each measured on its own fresh databases (or on the main run's at its size), and
 * `BENCH_PART=scaling`, a run of the scaling table alone written to its own dated section of docs/benchmarks.md
 * (the 1,000,000-package row takes most of an hour to seed with the product's seeder; with the bulk seeder, used
 * above 100,000 packages unless BENCH_SEEDER says otherwise, a few minutes on an idle machine).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { log, otherWorkCores, seconds, writeDocs } from "../Common.js"
import { measureScale, type ScaleRow, scalingTable } from "./Scaling.js"
import { seedBoth, type Seeder, seederFor } from "./Seeding.js"
import { databaseUrl, int, scaleRounds, scaleSizes, settings, withPg } from "./Settings.js"
import { buildScenarios, type Scenario, surveyCatalogue } from "./Workload.js"

export interface SizeRun {
  readonly rows: ReadonlyArray<ScaleRow>
  readonly scenarios: ReadonlyArray<Scenario>
  /** How the size's databases were seeded, and how long it took (absent: the main run's databases). */
  readonly seeding?: { readonly seeder: Seeder; readonly postgres: number; readonly analyze: number; readonly sqlite: number }
}

/** The scaling rows of one size: the main databases at the main size when given, fresh ones otherwise. */
export const measureScaleSize = async (
  size: number,
  tmp: string,
  main?: { readonly postgres: string; readonly sqlite: string }
): Promise<SizeRun> => {
  const scenarios = buildScenarios(surveyCatalogue(size))
  if (main !== undefined && size === settings.packages) {
    return {
      scenarios,
      rows: [
        await measureScale(size, "PostgreSQL", main.postgres, scenarios, scaleRounds),
        await measureScale(size, "SQLite", main.sqlite, scenarios, scaleRounds)
      ]
    }
  }
  const name = `${settings.databaseName}_scale`
  const postgresUrl = databaseUrl(settings.adminUrl, name)
  const sqliteFile = path.join(tmp, `scale-${size}.db`)
  await withPg(settings.adminUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  })
  try {
    log(`  seeding ${int(size)} packages`)
    const seeded = await seedBoth(postgresUrl, `sqlite:${sqliteFile}`, size)
    const analyzeStarted = Date.now()
    await withPg(postgresUrl, (client) => client.query("VACUUM (ANALYZE)"))
    const analyze = Date.now() - analyzeStarted
    log(`  seeded PostgreSQL in ${seconds(seeded.postgres)} (+ ${seconds(analyze)} VACUUM ANALYZE), SQLite in ${seconds(seeded.sqlite)}`)
    return {
      scenarios,
      seeding: { seeder: seederFor(size), ...seeded, analyze },
      rows: [
        await measureScale(size, "PostgreSQL", postgresUrl, scenarios, scaleRounds),
        await measureScale(size, "SQLite", `sqlite:${sqliteFile}`, scenarios, scaleRounds)
      ]
    }
  } finally {
    await withPg(settings.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${sqliteFile}${suffix}`, { force: true })
  }
}

interface Conditions {
  readonly size: number
  readonly load: number
  readonly otherWork: number
  readonly run: SizeRun
}

const seederName = (seeder: Seeder) => (seeder === "bulk" ? "the bulk seeder (BulkSeed.ts)" : "the product's `seedSynthetic`")

const renderScaling = (date: Date, postgresVersion: string, sizes: ReadonlyArray<Conditions>) => {
  const cpus = os.cpus()
  const rows = sizes.flatMap((s) => s.run.rows)
  const seeding = sizes.map((s) => {
    const seeded = s.run.seeding
    return seeded === undefined
      ? `${int(s.size)}: the main run's databases`
      : `${int(s.size)}: ${seederName(seeded.seeder)}, PostgreSQL ${seconds(seeded.postgres)} (+ ${
        seconds(seeded.analyze)
      } VACUUM ANALYZE), SQLite ${seconds(seeded.sqlite)}`
  })
  const conditions = sizes.map((s) =>
    `${int(s.size)}: load ${s.load.toFixed(1)}, other work ${s.otherWork.toFixed(2)} cores`
  )
  // The scenario titles are the same at every size; the words behind them are each size's own.
  const scenarios = sizes[sizes.length - 1]?.run.scenarios ?? []
  const words = sizes.map((s) =>
    `${int(s.size)}: ${
      s.run.scenarios.filter((x) => x.route === "search").map((x) =>
        `${x.title.replace("search: ", "")} ${x.paths.map((p) => new URL(p, "http://bench.invalid").searchParams.get("q")).join(", ")}`
      ).join("; ")
    }`
  )
  return `## Marketplace search and list latency by catalogue size

Written by \`BENCH_PART=scaling npm run bench:marketplace\` (scripts/bench/marketplace/ScalingRun.ts) on ${
    date.toISOString().slice(0, 16).replace("T", " ")
  } UTC.

- Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory; Node ${process.version}; PostgreSQL ${postgresVersion}. **Other sessions' jobs shared these ${cpus.length} cores during the run**; the 1-minute load average and the cores other work used (over 2 s while this run waited) just before each size was measured: ${
    conditions.join("; ")
  }. Latencies here are of one request at a time, so load shows as a slower call, not as queueing.
- Each store called in-process (no HTTP, no framework), one request at a time, every request of the scenario ${scaleRounds} times after one warm round; p50 / p99 of those calls. The searches also show today's search SQL (LegacyPackageStore.ts) on the same database, and the 3-letter prefix also the word walk that the prefix table (migration 0009) replaced. Every size has fresh databases, seeded then \`VACUUM (ANALYZE)\` on PostgreSQL (as \`seedSynthetic\` ends).
- Seeding: ${seeding.join("; ")}. The bulk seeder stores the rows \`seedSynthetic\` stores (test/bench/BulkSeed.test.ts compares every table on both databases) but builds the indexes once at the end, so they are packed tighter than indexes grown by imports.
- Words (each size's own catalogue, drawn as the main workload draws them): ${words.join(" · ")}.

${scalingTable(rows, scenarios)}
`
}

/** `BENCH_PART=scaling`: the scaling table alone, every size on fresh databases. */
export const mainScaling = async () => {
  const started = Date.now()
  const sizes = scaleSizes()
  log(`Marketplace scaling table: ${sizes.map(int).join(", ")} packages`)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-scale-"))
  try {
    const postgresVersion = await withPg(
      settings.adminUrl,
      async (client) => String((await client.query("SHOW server_version")).rows[0]?.server_version ?? "?")
    )
    const measured: Array<Conditions> = []
    for (const size of sizes) {
      const otherWork = await otherWorkCores(2000)
      const load = os.loadavg()[0] ?? 0
      log(`  ${int(size)} packages: load ${load.toFixed(1)}, other work ${otherWork.toFixed(2)} cores`)
      measured.push({ size, load, otherWork, run: await measureScaleSize(size, tmp) })
      log(`  ${int(size)} packages measured after ${seconds(Date.now() - started)}`)
    }
    const section = renderScaling(new Date(), postgresVersion, measured)
    log(`\n${section}`)
    log(`Written to ${writeDocs("marketplace-scaling", section)} after ${seconds(Date.now() - started)}`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}
