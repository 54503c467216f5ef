/** Settings of `npm run bench:marketplace` (read from the environment; see scripts/bench/marketplace.ts) and small helpers. */
import pg from "pg"
import { nonNegativeInt, percentile, positiveInt } from "../Common.js"

export const full = process.env.BENCH_FULL === "1"

const oneOf = <A extends string>(name: string, values: ReadonlyArray<A>): A | undefined => {
  const value = process.env[name]
  if (value === undefined || value === "") return undefined
  if (!(values as ReadonlyArray<string>).includes(value)) throw new Error(`${name} must be one of ${values.join(", ")}`)
  return value as A
}

/** Every scenario of the workload (Workload.ts `buildScenarios`), in its order. */
export const scenarioIds = [
  "search-common",
  "search-rare",
  "search-two",
  "search-prefix",
  "list-category-kind",
  "list-platform-name",
  "detail"
] as const

/** A comma-separated subset of `values`, in the order of `values`; all of them when unset. */
const listOf = <A extends string>(name: string, values: ReadonlyArray<A>): ReadonlyArray<A> => {
  const raw = (process.env[name] ?? "").split(",").map((x) => x.trim()).filter((x) => x !== "")
  if (raw.length === 0) return values
  const unknown = raw.filter((x) => !(values as ReadonlyArray<string>).includes(x))
  if (unknown.length > 0) throw new Error(`${name}: ${unknown.join(", ")} unknown; one or more of ${values.join(", ")}`)
  return values.filter((value) => raw.includes(value))
}

export const settings = {
  full,
  packages: positiveInt("BENCH_PACKAGES", 100_000),
  seconds: positiveInt("BENCH_SECONDS", full ? 10 : 2),
  scales: (process.env.BENCH_SCALE ?? "").split(",").filter((x) => x.trim() !== "").map(Number),
  adminUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  connections: 50,
  fixedRate: 200,
  searchP99TargetMs: 15,
  baselineRatioTarget: 0.6,
  databaseName: "clark_bench",
  /**
   * BENCH_SEEDER: `product` (seedSynthetic, the importer) or `bulk` (BulkSeed.ts: the same rows, by COPY and
   * multi-row INSERTs); unset, the product's up to 100,000 packages and the bulk seeder above (the importer
   * needs about 45 minutes for 1,000,000 packages on both databases here).
   */
  seeder: oneOf("BENCH_SEEDER", ["product", "bulk"] as const),
  /** BENCH_PART=scaling: only the scaling table, written to its own dated section. */
  part: oneOf("BENCH_PART", ["all", "scaling"] as const) ?? "all",
  /** BENCH_DATABASES: `postgres`, `sqlite` or both (the default), comma-separated. */
  databases: listOf("BENCH_DATABASES", ["postgres", "sqlite"] as const),
  /** BENCH_SCENARIOS: the scenario ids to run (Workload.ts), comma-separated; all by default. */
  scenarios: listOf("BENCH_SCENARIOS", scenarioIds)
}

/**
 * A run limited by BENCH_DATABASES or BENCH_SCENARIOS, for iterating on one part: it prints its figures, and
 * writes no docs/benchmarks.md section and no scaling table (a section needs every scenario on both databases).
 */
export const partialRun = settings.databases.length < 2 || settings.scenarios.length < scenarioIds.length

export const requestTimeoutSeconds = 120

/** Short: the body checks have already sent every request once, and the servers take turns afterwards. */
/**
 * 3 s whatever the run's length: after 1 s a new server's first measured run (the common word) still paid its
 * warming (bench:search-cpu, 2-second rounds: the first round's p99 237-361 ms, the next ones 76-99 ms).
 */
export const warmupSeconds = 3

/**
 * BENCH_RUN_WARMUP (seconds, default 1; 0 for none): before each measured run, the same server runs the same
 * scenario unmeasured. The servers of a database take turns, each idle through the others' runs, and a server's
 * first second back under load can be far slower than the rest (p99 262 ms in the first second after a run of
 * today's search SQL against 72-89 ms in the 5-second runs around it; PostgreSQL read no block from disk in any of
 * them). The target is a p99 under sustained load, not the first second after a pause the bench itself makes.
 */
export const runWarmupSeconds = nonNegativeInt("BENCH_RUN_WARMUP", 1)

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
export const ms2 = (value: number) => value.toFixed(2)
export const int = (value: number) => Math.round(value).toLocaleString("en-US")

export const median = (values: ReadonlyArray<number>): number => percentile([...values].sort((a, b) => a - b), 0.5)


/** Picks `count` items spread evenly over `items`. */
export const spread = <A>(items: ReadonlyArray<A>, count: number): Array<A> =>
  items.length <= count ? [...items] : Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]!)


export const withPg = async <A>(url: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

export const databaseUrl = (adminUrl: string, name: string) => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const scaleRounds = settings.full ? 20 : 10

/** Sizes of the scaling table: BENCH_SCALE, else 10,000 and the main size (and 1,000,000 with BENCH_FULL=1). */
export const scaleSizes = () =>
  [...new Set(settings.scales.length > 0 ? settings.scales : [10_000, settings.packages, ...(settings.full ? [1_000_000] : [])])]
    .sort((a, b) => a - b)
