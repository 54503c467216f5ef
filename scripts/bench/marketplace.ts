/**
 * `npm run bench:marketplace`: throughput and latency of the marketplace's read routes on
 * 100,000 synthetic packages, on PostgreSQL and SQLite, against a plain `node:http` + `pg`
 * baseline that runs the same SQL (scripts/bench/baseline-server.ts).
 *
 * The product runs twice on each database: as shipped (read cache on, the default) and with
 * `MARKETPLACE_READ_CACHE=off`. The baseline has no cache, so the cache-off product is the
 * like-for-like comparison with it (framework cost alone); the cache-on figures are what the
 * product delivers, with every rotated request a cache hit after its first answer.
 *
 * 1. Builds the server (`tsc`), seeds a fresh PostgreSQL database (`clark_bench`) and a fresh
 *    SQLite file with the product's own synthetic seeder.
 * 2. Checks, before measuring, that the baseline sends the very SQL text the product sends, and
 *    that the baseline and both product servers answer the same bodies (the cache-on server
 *    twice: once filling its cache, once answering from it).
 * 3. Drives each scenario with autocannon (50 connections, full speed, a rotating set of
 *    requests), the servers of one database taking turns scenario by scenario, then search at a
 *    fixed 200 req/s for the p99 target.
 * 4. Prints the tables and rewrites its section of docs/benchmarks.md.
 *
 * Search without the cache (issue 12): on each database two more servers answer the search scenarios,
 * scripts/bench/marketplace/SearchServer.ts with today's search SQL (`before`, LegacyPackageStore.ts) and with
 * the product's (`after`), both with the cache off, taking turns with the others; and a scaling table times
 * search and list in-process at several catalogue sizes (scripts/bench/marketplace/Scaling.ts).
 *
 * The parts live in scripts/bench/marketplace/: Settings.ts (environment), Workload.ts (scenarios), Seeding.ts,
 * Servers.ts (child processes), Parity.ts (the checks before measuring), Load.ts (autocannon and the paced load),
 * Report.ts (the section of docs/benchmarks.md), Main.ts (the run in order).
 *
 * Environment: BENCH_PACKAGES (default 100000), BENCH_SECONDS per run (default 2, which keeps a default run under 5 minutes here; 10 with BENCH_FULL=1),
 * BENCH_SCALE, the catalogue sizes of the scaling table (default 10000 and BENCH_PACKAGES; with BENCH_FULL=1
 * also 1000000), BENCH_DATABASE_URL, the administrative PostgreSQL connection
 * (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_DATABASES (postgres, sqlite; both by default) and
 * BENCH_SCENARIOS (scenario ids, Settings.ts `scenarioIds`; all by default): a run limited by either prints its
 * figures and writes nothing (e.g. PostgreSQL's searches alone while iterating), and BENCH_PRODUCT_NODE_OPTIONS, Node
 * flags for the product's servers only, on their command line (Servers.ts): `--cpu-prof --cpu-prof-dir=DIR` writes
 * each server's CPU profile when the run stops it (SIGTERM ends it through `process.exit`, which writes the profile;
 * NODE_OPTIONS itself refuses `--cpu-prof`), `--max-semi-space-size=N` tries a young generation of another size.
 * `npm run bench:search-cpu` (scripts/bench/search-cpu.ts) measures the server's and PostgreSQL's CPU per search
 * request, against a baseline commit and under several flag sets. The default run stays under 5 minutes on an idle
 * machine; BENCH_FULL=1 is the run whose figures are judged.
 */
import { killAll } from "./Children.js"
import { main } from "./marketplace/Main.js"
import { mainScaling } from "./marketplace/ScalingRun.js"
import { settings } from "./marketplace/Settings.js"

// Ctrl-C or a kill: the child servers go too (the database is dropped by the next run).
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
    process.exit(130)
  })
}

(settings.part === "scaling" ? mainScaling() : main()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nBenchmark failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
)
