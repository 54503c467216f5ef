/**
 * The scaling table of `npm run bench:marketplace`: search and list latency at several catalogue sizes, measured
 * in-process on the stores (no HTTP), one request at a time, today's search SQL (LegacyPackageStore.ts) beside the
 * product's. Each size has its own databases, seeded by the product's synthetic seeder.
 */
import { Effect, Either, Layer, ManagedRuntime, Schema } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { ListParams } from "../../../schema/marketplace/Package.js"
import * as Listing from "../../../services/marketplace/Listing.js"
import { type PackageQuery, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { percentile } from "../Common.js"
import * as LegacyPackageStore from "./LegacyPackageStore.js"

export interface ScaleScenario {
  readonly id: string
  readonly title: string
  readonly route: "search" | "packages" | "detail"
  readonly paths: ReadonlyArray<string>
}

export interface Latency {
  readonly p50: number
  readonly p99: number
}

export interface ScaleRow {
  readonly size: number
  readonly database: "PostgreSQL" | "SQLite"
  /** By scenario id: the product's latency, and today's for searches. */
  readonly after: ReadonlyMap<string, Latency>
  readonly before: ReadonlyMap<string, Latency>
  /** The 3-letter scenario by the word walk the prefix table replaced (migration 0009). */
  readonly walk: ReadonlyMap<string, Latency>
}

const decodeParams = Schema.decodeUnknownSync(ListParams)

const queriesOf = (scenario: ScaleScenario): ReadonlyArray<PackageQuery> =>
  scenario.paths.map((requestPath) => {
    const search = new URL(requestPath, "http://bench.invalid").searchParams
    const plan = Listing.plan(decodeParams(Object.fromEntries(search)), scenario.route === "search" ? "search" : "packages")
    if (Either.isLeft(plan)) throw new Error(`${requestPath}: the product refused the request`)
    return plan.right.query
  })

/** Each query of the scenario in turn, `rounds` times after one warm round; latency per call. */
const timeQueries = (queries: ReadonlyArray<PackageQuery>, rounds: number) =>
  Effect.gen(function*() {
    const store = yield* PackageStore
    const times: Array<number> = []
    for (let round = 0; round <= rounds; round++) {
      for (const query of queries) {
        const started = performance.now()
        yield* store.find(query)
        if (round > 0) times.push(performance.now() - started)
      }
    }
    times.sort((a, b) => a - b)
    return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
  })

export const measureScale = async (
  size: number,
  database: "PostgreSQL" | "SQLite",
  url: string,
  scenarios: ReadonlyArray<ScaleScenario>,
  rounds: number
): Promise<ScaleRow> => {
  const db = Database.layer(Database.parseDatabaseUrl(url)!)
  const measured = async (store: Layer.Layer<PackageStore, never, never>, which: ReadonlyArray<ScaleScenario>) => {
    const runtime = ManagedRuntime.make(store)
    try {
      const out = new Map<string, Latency>()
      for (const scenario of which) out.set(scenario.id, await runtime.runPromise(timeQueries(queriesOf(scenario), rounds)))
      return out
    } finally {
      await runtime.dispose()
    }
  }
  const listed = scenarios.filter((s) => s.route !== "detail")
  const after = await measured(SqlPackageStore.layer.pipe(Layer.provide(db), Layer.orDie), listed)
  const before = await measured(
    LegacyPackageStore.layer.pipe(Layer.provide(db), Layer.orDie),
    listed.filter((s) => s.route === "search")
  )
  const walk = await measured(
    Layer.effect(PackageStore, SqlPackageStore.makeWith({ prefixTable: false })).pipe(Layer.provide(db), Layer.orDie),
    listed.filter((s) => s.id === "search-prefix")
  )
  return { size, database, after, before, walk }
}

const ms = (value: number) => value.toFixed(2)

export const scalingTable = (rows: ReadonlyArray<ScaleRow>, scenarios: ReadonlyArray<ScaleScenario>) => {
  const listed = scenarios.filter((s) => s.route !== "detail")
  const header = ["Packages", "Database", ...listed.map((s) => `${s.title} p50 / p99 (ms)`)]
  const cell = (row: ScaleRow, s: ScaleScenario) => {
    const after = row.after.get(s.id)
    const before = row.before.get(s.id)
    if (after === undefined) return "–"
    const walk = row.walk.get(s.id)
    const now = `${ms(after.p50)} / ${ms(after.p99)}`
    const earlier = [
      ...(walk === undefined ? [] : [`word walk ${ms(walk.p50)} / ${ms(walk.p99)}`]),
      ...(before === undefined ? [] : [`today ${ms(before.p50)} / ${ms(before.p99)}`])
    ]
    return earlier.length === 0 ? now : `${now} (${earlier.join("; ")})`
  }
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, i) => (i < 2 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.size.toLocaleString("en-US")} | ${row.database} | ${listed.map((s) => cell(row, s)).join(" | ")} |`)
  ].join("\n")
}
