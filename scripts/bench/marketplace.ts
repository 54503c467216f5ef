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
 * Environment: BENCH_PACKAGES (default 100000), BENCH_SECONDS per run (default 2, which keeps a default run under 5 minutes here; 10 with BENCH_FULL=1),
 * BENCH_SCALE, the catalogue sizes of the scaling table (default 10000 and BENCH_PACKAGES; with BENCH_FULL=1
 * also 1000000), BENCH_DATABASE_URL, the administrative PostgreSQL connection
 * (default postgres://postgres@127.0.0.1:5432/postgres). The default run stays under 5 minutes on an idle
 * machine; BENCH_FULL=1 is the run whose figures are judged.
 */
import { type SqlClient, Statement } from "@effect/sql"
import autocannon from "autocannon"
import { Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { isDeepStrictEqual } from "node:util"
import pg from "pg"
import { defaultCacheOptions } from "../../layers/marketplace/cache/CachedPackageStore.js"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../layers/marketplace/sql/SqlCatalogImporter.js"
import * as SqlPackageStore from "../../layers/marketplace/sql/SqlPackageStore.js"
import { ListParams, publicStatuses } from "../../schema/marketplace/Package.js"
import * as Listing from "../../services/marketplace/Listing.js"
import { PackageStore } from "../../services/marketplace/PackageStore.js"
import { seedSynthetic } from "../../src/marketplace/admin/Admin.js"
import { syntheticPackages, syntheticTaxonomy } from "../../src/marketplace/seed/Synthetic.js"
import { detailSql, findSql, listRequest, poolSize, type SqlQuery } from "./baseline-server.js"
import * as LegacyPackageStore from "./marketplace/LegacyPackageStore.js"
import { measureScale, type ScaleRow, scalingTable } from "./marketplace/Scaling.js"
import { searchSection, type SearchRuns } from "./marketplace/SearchReport.js"
import { assertRunning, type Child, childFailure, isRunning, killAll, startChild, stopAll, stopChild } from "./Children.js"
import {
  build,
  freePort,
  log,
  otherWorkCores,
  otherWorkLimit,
  percentile,
  positiveInt,
  seconds,
  writeDocs
} from "./Common.js"

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------



const full = process.env.BENCH_FULL === "1"

const settings = {
  full,
  packages: positiveInt("BENCH_PACKAGES", 100_000),
  seconds: positiveInt("BENCH_SECONDS", full ? 10 : 2),
  scales: (process.env.BENCH_SCALE ?? "").split(",").filter((x) => x.trim() !== "").map(Number),
  adminUrl: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  connections: 50,
  fixedRate: 200,
  searchP99TargetMs: 15,
  baselineRatioTarget: 0.6,
  databaseName: "clark_bench"
}

const requestTimeoutSeconds = 120

/** Short: the body checks have already sent every request once, and the servers take turns afterwards. */
const warmupSeconds = Math.min(3, Math.max(1, Math.round(settings.seconds / 3)))

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const ms2 = (value: number) => value.toFixed(2)
const int = (value: number) => Math.round(value).toLocaleString("en-US")

const median = (values: ReadonlyArray<number>): number => percentile([...values].sort((a, b) => a - b), 0.5)


/** Picks `count` items spread evenly over `items`. */
const spread = <A>(items: ReadonlyArray<A>, count: number): Array<A> =>
  items.length <= count ? [...items] : Array.from({ length: count }, (_, i) => items[Math.floor((i * items.length) / count)]!)


const withPg = async <A>(url: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

const databaseUrl = (adminUrl: string, name: string) => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

const waitHealthy = async (child: Child, baseUrl: string) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    assertRunning(child)
    try {
      // Bounded: a request that reaches a server between listening and installing its handler gets no answer.
      const response = await fetch(`${baseUrl}/api/v1/health`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw childFailure(child, "did not answer GET /api/v1/health with 200 within 60 s")
}

interface Server {
  readonly label: string
  readonly baseUrl: string
  readonly child: Child
}

const startServer = async (label: string, args: ReadonlyArray<string>, env?: Record<string, string>): Promise<Server> => {
  const child = startChild(label, args, env)
  const baseUrl = `http://127.0.0.1:${args[args.length - 1]}`
  const started = Date.now()
  await waitHealthy(child, baseUrl)
  log(`  ${label} healthy at ${baseUrl} after ${seconds(Date.now() - started)}`)
  return { label, baseUrl, child }
}

/**
 * The warning level. The README names it `Warning`, but the server reads LOG_LEVEL with Effect's
 * `Config.logLevel`, which only knows ALL, FATAL, ERROR, WARN, INFO, DEBUG, TRACE and OFF and
 * refuses `Warning` at startup; `Warn` is the same level.
 */
const warningLogLevel = "Warn"

type ReadCache = "on" | "off"

const startMarketplace = async (label: string, database: string, readCache: ReadCache) =>
  startServer(label, ["bin/clark.js", "marketplace", "serve", "--database", database, "--port", String(await freePort())], {
    LOG_LEVEL: warningLogLevel,
    MARKETPLACE_READ_CACHE: readCache,
    // One load generator is one client address: limited, nearly every request would be a 429.
    MARKETPLACE_RATE_LIMITS: "off"
  })

const startBaseline = async (database: string) =>
  startServer("baseline (node:http + pg)", [
    "--import",
    "tsx",
    "scripts/bench/baseline-server.ts",
    "--database",
    database,
    "--port",
    String(await freePort())
  ])

// ---------------------------------------------------------------------------
// Workload: queries drawn from the synthetic catalogue itself, so they match
// ---------------------------------------------------------------------------

type Route = "search" | "packages" | "detail"

interface Scenario {
  readonly id: string
  readonly title: string
  readonly route: Route
  /** Request paths autocannon rotates through. */
  readonly paths: ReadonlyArray<string>
}

const wordsOf = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

/** Connectives the generator writes into every description; not vocabulary. */
const connectives = new Set(["for", "and"])

/**
 * Regenerates the catalogue the seeder writes (it is a pure function of seed and index) and
 * counts, for every vocabulary word, how many public packages contain it.
 */
const surveyCatalogue = (count: number) => {
  const frequency = new Map<string, number>()
  const names: Array<string> = []
  const samples: Array<ReadonlyArray<string>> = []
  const kinds = new Set<string>()
  const platforms = new Set<string>()
  const chunk = 2000
  for (let start = 0; start < count; start += chunk) {
    const packages = syntheticPackages({ seed: 1, start, count: Math.min(chunk, count - start), now: new Date() })
    for (const pkg of packages) {
      if (pkg.curationStatus !== "listed" && pkg.curationStatus !== "featured") continue
      const words = new Set(
        wordsOf(`${pkg.displayName} ${(pkg.keywords ?? []).join(" ")} ${pkg.description}`).filter((w) => !connectives.has(w))
      )
      for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1)
      if (names.length % 97 === 0) samples.push([...words])
      names.push(pkg.name)
      const latest = pkg.versions?.[pkg.versions.length - 1]
      for (const facet of latest?.facets ?? []) kinds.add(facet.kind)
      for (const platform of latest?.platforms ?? []) platforms.add(platform)
    }
  }
  return { frequency, names, samples, kinds: [...kinds].sort(), platforms: [...platforms].sort() }
}

const queriesPerShape = 5

const buildScenarios = (survey: ReturnType<typeof surveyCatalogue>): Array<Scenario> => {
  const df = (word: string) => survey.frequency.get(word) ?? 0
  const byFrequency = [...survey.frequency.keys()].sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1))
  const isPrefixOfAnother = (word: string) => byFrequency.some((other) => other !== word && other.startsWith(word))

  const common = byFrequency.slice(0, queriesPerShape)
  // Rare: among the least frequent words (words that prefix another word would match more).
  const rare = spread(
    byFrequency.filter((w) => !isPrefixOfAnother(w)).reverse().slice(0, queriesPerShape * 4),
    queriesPerShape
  )
  // Two words: the two most frequent words of sampled packages, so each pair matches at least one.
  const pairs = [
    ...new Set(
      survey.samples
        .map((words) => [...words].sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1)).slice(0, 2))
        .filter((pair) => pair.length === 2)
        .map((pair) => pair.join(" "))
    )
  ]
  const twoWords = spread(pairs, queriesPerShape)
  const prefixes = [...new Set(byFrequency.filter((w) => w.length >= 5).map((w) => w.slice(0, 3)))].slice(0, queriesPerShape)

  for (const [shape, list] of Object.entries({ common, rare, twoWords, prefixes })) {
    if (list.length === 0) throw new Error(`no ${shape} search terms in a catalogue of ${survey.names.length} public packages`)
  }

  const search = (q: string) => `/api/v1/search?q=${encodeURIComponent(q)}`
  const categories = syntheticTaxonomy().categories.map((c) => c.slug)
  const combos = Array.from({ length: 6 }, (_, i) => [categories[(i * 5) % categories.length]!, survey.kinds[i % survey.kinds.length]!])

  return [
    { id: "search-common", title: "search: a common word", route: "search", paths: common.map(search) },
    { id: "search-rare", title: "search: a rare word", route: "search", paths: rare.map(search) },
    { id: "search-two", title: "search: two words", route: "search", paths: twoWords.map(search) },
    { id: "search-prefix", title: "search: 3-letter prefix", route: "search", paths: prefixes.map(search) },
    {
      id: "list-category-kind",
      title: "packages: category + kind",
      route: "packages",
      paths: combos.map(([category, kind]) => `/api/v1/packages?category=${category}&kind=${kind}`)
    },
    {
      id: "list-platform-name",
      title: "packages: platform, sort=name",
      route: "packages",
      paths: survey.platforms.map((platform) => `/api/v1/packages?platform=${platform}&sort=name`)
    },
    {
      id: "detail",
      title: "package detail",
      route: "detail",
      paths: spread(survey.names, 500).map((name) => `/api/v1/packages/${encodeURIComponent(name)}`)
    }
  ]
}

const searchParamsOf = (requestPath: string) => new URL(requestPath, "http://bench.invalid").searchParams
const detailNameOf = (requestPath: string) => decodeURIComponent(requestPath.slice("/api/v1/packages/".length))

// ---------------------------------------------------------------------------
// Seeding
// ---------------------------------------------------------------------------

const seed = async (label: string, url: string, count: number) => {
  const started = Date.now()
  let reported = 0
  const onProgress = (written: number) =>
    Effect.sync(() => {
      if (written === count || written - reported >= count / 5) {
        reported = written
        log(`  ${label}: ${int(written)} / ${int(count)} packages (${seconds(Date.now() - started)})`)
      }
    })
  const layer = SqlCatalogImporter.layer.pipe(Layer.provide(Database.layer(Database.parseDatabaseUrl(url)!)))
  await Effect.runPromise(seedSynthetic(count, onProgress).pipe(Effect.provide(layer)))
  return Date.now() - started
}

// ---------------------------------------------------------------------------
// Baseline parity: the same SQL text as the product, the same bodies
// ---------------------------------------------------------------------------

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

/**
 * Runs a PackageStore (the product's, or for searches today's, LegacyPackageStore.ts) for every request and
 * compares its statements with the baseline's: the baseline searches with today's SQL.
 */
const checkSqlParity = async (
  url: string,
  scenarios: ReadonlyArray<Scenario>,
  store: Layer.Layer<PackageStore, never, SqlClient.SqlClient> = SqlPackageStore.layer,
  label = "the product's"
) => {
  const decodeParams = Schema.decodeUnknownSync(ListParams)
  const captureStatements = <A>(effect: Effect.Effect<A>) =>
    Effect.gen(function*() {
      const statements: Array<SqlQuery> = []
      yield* effect.pipe(
        Statement.withTransformer((statement) =>
          Effect.sync(() => {
            const [text, values] = statement.compile()
            statements.push({ text, values })
            return statement
          })
        )
      )
      return statements
    })

  const program = Effect.gen(function*() {
    const store = yield* PackageStore
    const pairs: Array<{ readonly request: string; readonly product: SqlQuery; readonly baseline: SqlQuery }> = []
    for (const scenario of scenarios) {
      for (const requestPath of scenario.paths) {
        if (scenario.route === "detail") {
          const name = detailNameOf(requestPath)
          const statements = yield* captureStatements(store.detail(name, publicStatuses))
          if (statements.length !== 1) throw new Error(`${requestPath}: the product sent ${statements.length} statements, not 1`)
          pairs.push({ request: requestPath, product: statements[0]!, baseline: detailSql(name) })
        } else {
          const search = searchParamsOf(requestPath)
          const plan = Listing.plan(decodeParams(Object.fromEntries(search)), scenario.route)
          if (Either.isLeft(plan)) throw new Error(`${requestPath}: the product refused the request`)
          const [find] = yield* captureStatements(store.find(plan.right.query))
          pairs.push({ request: requestPath, product: find!, baseline: findSql(listRequest(search)) })
        }
      }
    }
    return pairs
  })
  const layer = store.pipe(Layer.provideMerge(Database.layer(Database.parseDatabaseUrl(url)!)))
  const pairs = await Effect.runPromise(program.pipe(Effect.provide(layer)))

  let whitespaceOnly = 0
  for (const { baseline, product, request } of pairs) {
    const sameValues = isDeepStrictEqual(product.values, baseline.values)
    if (product.text === baseline.text && sameValues) continue
    if (collapse(product.text) === collapse(baseline.text) && sameValues) {
      whitespaceOnly++
      continue
    }
    throw new Error(
      `the baseline's SQL differs from the product's for ${request}; update scripts/bench/baseline-server.ts\n` +
        `product:  ${JSON.stringify([product.text, product.values])}\nbaseline: ${JSON.stringify([baseline.text, baseline.values])}`
    )
  }
  log(
    `  ${pairs.length} statements: the baseline's SQL equals ${label}` +
      (whitespaceOnly > 0 ? ` (${whitespaceOnly} differ in whitespace only)` : "")
  )
}

const getJson = async (baseUrl: string, requestPath: string) => {
  const response = await fetch(`${baseUrl}${requestPath}`)
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET ${baseUrl}${requestPath}: ${response.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as Record<string, unknown>
}

const itemsOf = (body: Record<string, unknown>): ReadonlyArray<unknown> => (Array.isArray(body.items) ? body.items : [])

/**
 * Every request answers 200, lists are not empty, and (with a reference) the bodies match it.
 * Returns the total length of the server's bodies.
 */
const checkResponses = async (server: Server, scenarios: ReadonlyArray<Scenario>, reference?: Server, note = "") => {
  let checked = 0
  let bytes = 0
  for (const scenario of scenarios) {
    for (const requestPath of scenario.paths) {
      const response = await fetch(`${server.baseUrl}${requestPath}`)
      const text = await response.text()
      if (response.status !== 200) throw new Error(`GET ${server.baseUrl}${requestPath}: ${response.status} ${text.slice(0, 300)}`)
      bytes += Buffer.byteLength(text)
      const body = JSON.parse(text) as Record<string, unknown>
      if (scenario.route !== "detail" && itemsOf(body).length === 0) {
        throw new Error(`${server.label}: GET ${requestPath} matched nothing; the workload would measure empty pages`)
      }
      if (reference !== undefined) {
        const expected = await getJson(reference.baseUrl, requestPath)
        const comparable = (b: Record<string, unknown>) =>
          scenario.route === "detail" ? b : { ...b, nextCursor: b.nextCursor === null ? null : "(cursor)" }
        if (!isDeepStrictEqual(comparable(body), comparable(expected))) {
          throw new Error(
            `${server.label} and ${reference.label} answer GET ${requestPath} differently:\n` +
              `${JSON.stringify(expected).slice(0, 600)}\n${JSON.stringify(body).slice(0, 600)}`
          )
        }
      }
      checked++
    }
  }
  log(`  ${server.label}${note}: ${checked} requests answer 200${reference ? `, bodies equal to ${reference.label}'s` : ""}`)
  return bytes
}

// ---------------------------------------------------------------------------
// Database-side figures: how many rows match, and what the SQL costs alone
// ---------------------------------------------------------------------------

interface SqlFigures {
  /** Median number of matching packages over the scenario's requests (list and search). */
  readonly matches: number | undefined
  /** Median time of the scenario's statements, one at a time on one connection. */
  readonly sqlMs: number
}

const measureSql = (url: string, scenarios: ReadonlyArray<Scenario>) =>
  withPg(url, async (client) => {
    const figures = new Map<string, SqlFigures>()
    const timed = async (query: SqlQuery) => {
      const started = process.hrtime.bigint()
      const result = await client.query(query.text, [...query.values])
      return { rows: result.rows as Array<Record<string, unknown>>, ms: Number(process.hrtime.bigint() - started) / 1e6 }
    }
    for (const scenario of scenarios) {
      const times: Array<number> = []
      const matches: Array<number> = []
      const paths = spread(scenario.paths, 50)
      for (let round = 0; round < 3; round++) {
        for (const requestPath of paths) {
          if (scenario.route === "detail") {
            times.push((await timed(detailSql(detailNameOf(requestPath)))).ms)
          } else {
            const query = findSql(listRequest(searchParamsOf(requestPath)))
            times.push((await timed(query)).ms)
            if (round === 0) {
              const unlimited = [...query.values.slice(0, -1), 2_147_483_647]
              const { rows } = await client.query(`SELECT count(*)::int AS n FROM (${query.text}) c`, unlimited)
              matches.push(Number(rows[0]?.n))
            }
          }
        }
      }
      // The first round warms the cache; the figure is of the last two.
      figures.set(scenario.id, {
        matches: matches.length > 0 ? median(matches) : undefined,
        sqlMs: median(times.slice(paths.length))
      })
    }
    return figures
  })

// ---------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------

interface Measurement {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  /** Connection-level failures (resets, timeouts): counted and reported, not fatal. */
  readonly errors: number
  readonly errorKinds: string
  readonly total: number
}

interface LoadOptions {
  readonly duration: number
  readonly rate?: number | undefined
}

/**
 * One autocannon run. Latencies are taken from each response's timing rather than autocannon's
 * histogram, which keeps whole milliseconds only; at a fixed rate no coordinated-omission
 * correction is applied (autocannon's uses an interval in the wrong unit and backfills 1 ms samples).
 */
const load = async (server: Server, paths: ReadonlyArray<string>, options: LoadOptions) => {
  await settle(server)
  return new Promise<Measurement>((resolve, reject) => {
    const latencies: Array<number> = []
    const errorKinds = new Map<string, number>()
    const instance = autocannon(
      {
        url: server.baseUrl,
        connections: settings.connections,
        duration: options.duration,
        // A slow answer is measured, not dropped: heavy searches queue behind 50 connections.
        timeout: requestTimeoutSeconds,
        requests: paths.map((requestPath) => ({ method: "GET" as const, path: requestPath })),
        ...(options.rate === undefined ? {} : { overallRate: options.rate, ignoreCoordinatedOmission: true })
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error)
        if (!isRunning(server.child)) return reject(childFailure(server.child, "exited during the run"))
        if (result.non2xx > 0) {
          return reject(
            new Error(
              `${server.label}: ${result.non2xx} non-2xx responses (status codes ${JSON.stringify(result.statusCodeStats ?? {})}) ` +
                `over ${paths[0]} and ${paths.length - 1} more`
            )
          )
        }
        latencies.sort((a, b) => a - b)
        resolve({
          requestsPerSecond: result.requests.average,
          p50: percentile(latencies, 0.5),
          p99: percentile(latencies, 0.99),
          non2xx: result.non2xx,
          errors: result.errors,
          errorKinds: [...errorKinds].map(([kind, n]) => `${kind} ×${n}`).join(", "),
          total: result.requests.total
        })
      }
    )
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
    })
    instance.on("reqError", (error: unknown) => {
      const kind = typeof error === "object" && error !== null && "code" in error ? String(error.code) : String(error)
      errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1)
    })
  })
}

/**
 * Waits until the server has drained what the last run left in flight (autocannon stops on
 * time, not on its last answer): health, a `SELECT 1` through the pool, answers quickly twice.
 */
const settle = async (server: Server) => {
  const started = Date.now()
  let quick = 0
  while (quick < 2) {
    if (Date.now() - started > 120_000) throw childFailure(server.child, "was still busy 120 s after a run")
    const asked = Date.now()
    const response = await fetch(`${server.baseUrl}/api/v1/health`)
    await response.arrayBuffer()
    quick = response.status === 200 && Date.now() - asked < 50 ? quick + 1 : 0
    if (quick < 2) await sleep(100)
  }
  const waited = Date.now() - started
  if (waited > 1000) log(`  (${server.label} drained its backlog in ${seconds(waited)})`)
}

const describe = (m: Measurement) =>
  `${int(m.requestsPerSecond)} req/s, p50 ${ms2(m.p50)} ms, p99 ${ms2(m.p99)} ms` +
  (m.errors > 0 ? `, ${m.errors} connection errors (${m.errorKinds || "no detail"})` : "")

const labelWidth = 34

const warmUp = async (server: Server, scenarios: ReadonlyArray<Scenario>) => {
  const m = await load(server, scenarios.flatMap((s) => spread(s.paths, 20)), { duration: warmupSeconds })
  log(`  warm-up ${server.label}: ${describe(m)}`)
}

const runScenario = async (server: Server, scenario: Scenario) => {
  const m = await load(server, scenario.paths, { duration: settings.seconds })
  log(`  ${scenario.title.padEnd(32)} ${server.label.padEnd(labelWidth)} ${describe(m)}`)
  return m
}

/**
 * An open-loop load at an even pace: one request every 1000 / rate ms, whatever the answers do,
 * over a keep-alive pool of `settings.connections` sockets. autocannon's `overallRate` instead lets
 * every connection send its whole per-second quota back to back at the start of each second, so
 * "200 req/s" arrives as a burst of 200 and the figures measure the burst's queue. Latency is
 * counted from the moment the request was due, so a server that falls behind pays for the
 * requests waiting on it (no coordinated omission).
 */
const paced = async (server: Server, paths: ReadonlyArray<string>, rate: number, durationSeconds: number) => {
  await settle(server)
  const agent = new http.Agent({ keepAlive: true, maxSockets: settings.connections })
  const latencies: Array<number> = []
  const errorKinds = new Map<string, number>()
  let non2xx = 0
  const interval = 1000 / rate
  const total = Math.round(rate * durationSeconds)
  const started = performance.now()
  const inFlight: Array<Promise<void>> = []
  for (let i = 0; i < total; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const requestPath = paths[i % paths.length]!
    inFlight.push(
      new Promise<void>((resolve) => {
        const request = http.get(`${server.baseUrl}${requestPath}`, { agent }, (response) => {
          response.resume()
          response.on("end", () => {
            if ((response.statusCode ?? 0) >= 300) non2xx++
            latencies.push(performance.now() - due)
            resolve()
          })
        })
        request.setTimeout(requestTimeoutSeconds * 1000, () => request.destroy(new Error("timeout")))
        request.on("error", (error) => {
          errorKinds.set(error.message, (errorKinds.get(error.message) ?? 0) + 1)
          resolve()
        })
      })
    )
  }
  await Promise.all(inFlight)
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  if (!isRunning(server.child)) throw childFailure(server.child, "exited during the run")
  if (non2xx > 0) throw new Error(`${server.label}: ${non2xx} non-2xx responses at ${rate} req/s`)
  latencies.sort((x, y) => x - y)
  const measurement: Measurement = {
    requestsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    non2xx,
    errors: [...errorKinds.values()].reduce((n, count) => n + count, 0),
    errorKinds: [...errorKinds].map(([kind, count]) => `${kind} ×${count}`).join(", "),
    total: latencies.length
  }
  return measurement
}

const runFixedRate = async (server: Server, paths: ReadonlyArray<string>) => {
  const m = await paced(server, paths, settings.fixedRate, settings.seconds)
  log(`  ${`search at ${settings.fixedRate} req/s`.padEnd(32)} ${server.label.padEnd(labelWidth)} ${describe(m)}`)
  return m
}

/** One server's figures: every scenario at full speed, and search at the fixed rate. */
interface Run {
  readonly scenarios: ReadonlyMap<string, Measurement>
  readonly fixedRate: Measurement
}

/**
 * Measures the servers of one database. They take turns scenario by scenario, so that a change
 * in the machine's load (other work on these cores) falls on all of them alike.
 */
const measureServers = async <K extends string>(
  servers: Record<K, Server>,
  scenarios: ReadonlyArray<Scenario>,
  searchPaths: ReadonlyArray<string>,
  /** Servers that answer the search scenarios only (the before/after search servers). */
  searchOnly: ReadonlyArray<NoInfer<K>> = []
): Promise<Record<K, Run>> => {
  const entries = Object.entries(servers) as Array<[K, Server]>
  const answers = (key: K, scenario: Scenario) => scenario.route === "search" || !searchOnly.includes(key)
  for (const [key, server] of entries) await warmUp(server, scenarios.filter((s) => answers(key, s)))
  const measured = new Map(entries.map(([key]) => [key, new Map<string, Measurement>()]))
  for (const scenario of scenarios) {
    for (const [key, server] of entries) {
      if (answers(key, scenario)) measured.get(key)!.set(scenario.id, await runScenario(server, scenario))
    }
  }
  const runs = {} as Record<K, Run>
  for (const [key, server] of entries) {
    runs[key] = { scenarios: measured.get(key)!, fixedRate: await runFixedRate(server, searchPaths) }
  }
  return runs
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

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

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
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

const latencies = (m: Measurement) => `${ms2(m.p50)} / ${ms2(m.p99)}`
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

const renderSection = (r: Results) => {
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
- Data: ${int(settings.packages)} synthetic packages (\`seedSynthetic\`, seed 1), ${int(r.publicPackages)} of them public. Seeding took ${seconds(r.seeding.postgres)} on PostgreSQL (then ${seconds(r.seeding.analyze)} of \`VACUUM (ANALYZE)\`, the state autovacuum reaches by itself after a bulk load) and ${seconds(r.seeding.sqlite)} on SQLite (a file under the temporary directory, no ANALYZE: the product never runs one).
- Servers: the compiled product (\`node bin/clark.js marketplace serve\`, \`LOG_LEVEL=${warningLogLevel}\`, pool of ${poolSize}) twice on each database, **as shipped (read cache on, the default)** and **with \`MARKETPLACE_READ_CACHE=off\`**; on PostgreSQL also the baseline, scripts/bench/baseline-server.ts, plain \`node:http\` + \`pg\` with a pool of ${poolSize} and **no cache**. Before the runs the baseline was checked to send the very SQL text the product sends, and both product servers to answer bodies equal to the baseline's (on SQLite, to each other's); the cache-on server was checked twice, filling its cache and answering from it.
- Read cache: as shipped, the product keeps package reads in memory (up to ${cacheLimit}) until the catalogue version moves, and still asks the database for that version on every read (on PostgreSQL one primary-key lookup). The workload rotates through ${int(distinct)} distinct requests (${(r.answerBytes / 2 ** 20).toFixed(1)} MiB of answers, within those limits), the body checks read each of them before the runs, and nothing writes during the runs: **every cache-on request measured here is a cache hit, by construction**. Traffic with many distinct queries, or a catalogue that changes often, lands between the cache-on and the cache-off figures. The cache-off product runs the same SQL as the baseline for every request: it is the like-for-like measure of the framework's cost.
- Load: autocannon in the driver process, ${settings.connections} connections at full speed for ${settings.seconds} s per scenario and server, each connection rotating through the scenario's requests; the servers of one database take turns scenario by scenario; a ${warmupSeconds} s warm-up over every scenario before each server's first run. Latencies are per response with sub-millisecond precision. Every run had 0 non-2xx responses (the benchmark fails otherwise); "errors" counts connection-level failures (resets; timeouts after ${requestTimeoutSeconds} s), reported but not fatal. Before each run the driver waits until the server has drained the previous run's backlog.

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

GET /api/v1/search rotating through the ${searchCount} distinct search requests above (${searches.map((s) => s.paths.length).join(" + ")}, one set per search scenario), ${settings.fixedRate} req/s paced evenly (one request every ${ms2(1000 / settings.fixedRate)} ms, open loop, over a keep-alive pool of up to ${settings.connections} sockets) for ${settings.seconds} s; latency counts from the moment each request was due, so waiting to be sent is included. With the cache on, all ${searchCount} answers are in memory before the run starts and stay there, so every request is a hit (one version lookup, no search): a hit rate of 100 % by construction, far above what varied real queries would give. A search the cache does not hold costs what the cache-off row shows. A server slower than the pace answers fewer than ${settings.fixedRate} requests a second ("fell behind"), and the requests queued behind it show in its latencies.

Target on PostgreSQL: p99 ≤ ${settings.searchP99TargetMs} ms at ${int(settings.packages)} packages.

- **Product as shipped** (cache on): ${verdict(r.postgres.on.fixedRate.p99 <= settings.searchP99TargetMs)} (${atRate(r.postgres.on.fixedRate)}).
- **Framework alone** (cache off, every search runs its SQL): ${verdict(r.postgres.off.fixedRate.p99 <= settings.searchP99TargetMs)} (${atRate(r.postgres.off.fixedRate)}); the baseline, for reference: ${atRate(r.postgres.baseline.fixedRate)}.

${fixedRateTable(r)}

${searchSection({ settings, search: r.search })}

### Scaling: search and list latency by catalogue size

Each store called in-process (no HTTP, no framework), one request at a time on an otherwise idle database, every request of the scenario ${scaleRounds} times after one warm round; p50 / p99 of those calls. The searches also show today's search SQL (LegacyPackageStore.ts) on the same database. The words are drawn from each size's own catalogue the way the workload above draws them. Sizes: ${r.scaling.map((row) => int(row.size)).filter((x, i, all) => all.indexOf(x) === i).join(", ")}${settings.full ? "" : " (1,000,000 with `BENCH_FULL=1` or `BENCH_SCALE`)"}.

${scalingTable(r.scaling, r.scenarios)}
`
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

const loadAverage = () => os.loadavg()[0] ?? 0

const logLoad = (when: string) => {
  const load = loadAverage()
  log(`  1-minute load average ${when}: ${load.toFixed(1)} on ${os.cpus().length} cores`)
  return load
}

const otherWorkWindowMs = 2000

/** Other work on the machine while ours waits; a warning when it would skew the figures. */
const checkOtherWork = async (when: string) => {
  const cores = await otherWorkCores(otherWorkWindowMs)
  log(
    `  other work ${when}: ${cores.toFixed(2)} cores` +
      (cores > otherWorkLimit ? "; warning: it will skew the figures" : "")
  )
  return cores
}

const scaleRounds = settings.full ? 20 : 10

/** Sizes of the scaling table: BENCH_SCALE, else 10,000 and the main size (and 1,000,000 with BENCH_FULL=1). */
const scaleSizes = () =>
  [...new Set(settings.scales.length > 0 ? settings.scales : [10_000, settings.packages, ...(settings.full ? [1_000_000] : [])])]
    .sort((a, b) => a - b)

const startSearchServer = async (store: "before" | "after", database: string, label: string) =>
  startServer(label, [
    "--import",
    "tsx",
    "scripts/bench/marketplace/SearchServer.ts",
    "--store",
    store,
    "--database",
    database,
    "--port",
    String(await freePort())
  ], { LOG_LEVEL: warningLogLevel, MARKETPLACE_READ_CACHE: "off", MARKETPLACE_RATE_LIMITS: "off" })

const searchRuns = (
  database: "PostgreSQL" | "SQLite",
  scenarios: ReadonlyArray<Scenario>,
  runs: { readonly before: Run; readonly after: Run; readonly off: Run }
): SearchRuns => ({
  database,
  scenarios: scenarios.filter((s) => s.route === "search"),
  before: runs.before.scenarios,
  after: runs.after.scenarios,
  product: runs.off.scenarios
})

/**
 * Seeds both databases, one after the other: at once in this process, SQLite's synchronous writes starved
 * PostgreSQL's seeding and the two took longer than in turn.
 */
const seedBoth = async (postgresUrl: string, sqliteUrl: string, count: number) => {
  const postgres = await seed("PostgreSQL", postgresUrl, count)
  const sqlite = await seed("SQLite", sqliteUrl, count)
  return { postgres, sqlite }
}

/** The scaling rows of one size: the main databases at the main size, fresh ones otherwise. */
const measureScaleSize = async (size: number, main: { readonly postgres: string; readonly sqlite: string }, tmp: string) => {
  const scenarios = size === settings.packages ? undefined : buildScenarios(surveyCatalogue(size))
  if (scenarios === undefined) {
    return [
      await measureScale(size, "PostgreSQL", main.postgres, buildScenarios(surveyCatalogue(size)), scaleRounds),
      await measureScale(size, "SQLite", main.sqlite, buildScenarios(surveyCatalogue(size)), scaleRounds)
    ]
  }
  const name = `${settings.databaseName}_scale`
  const postgresUrl = databaseUrl(settings.adminUrl, name)
  const sqliteUrl = `sqlite:${path.join(tmp, `scale-${size}.db`)}`
  await withPg(settings.adminUrl, async (admin) => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.query(`CREATE DATABASE ${name}`)
  })
  try {
    log(`  seeding ${int(size)} packages`)
    await seedBoth(postgresUrl, sqliteUrl, size)
    await withPg(postgresUrl, (client) => client.query("VACUUM (ANALYZE)"))
    return [
      await measureScale(size, "PostgreSQL", postgresUrl, scenarios, scaleRounds),
      await measureScale(size, "SQLite", sqliteUrl, scenarios, scaleRounds)
    ]
  } finally {
    await withPg(settings.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    fs.rmSync(sqliteUrl.slice("sqlite:".length), { force: true })
  }
}

const main = async () => {
  const started = Date.now()
  log(
    `Marketplace benchmark: ${int(settings.packages)} packages, ${settings.seconds} s per run, ${settings.connections} connections` +
      (settings.full ? " (BENCH_FULL=1)" : "")
  )
  build("server")

  const postgresUrl = databaseUrl(settings.adminUrl, settings.databaseName)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-"))
  const sqliteUrl = `sqlite:${path.join(tmp, "marketplace.db")}`
  const dropDatabase = () =>
    withPg(settings.adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${settings.databaseName} WITH (FORCE)`))

  try {
    log("Workload")
    const survey = surveyCatalogue(settings.packages)
    const scenarios = buildScenarios(survey)
    for (const s of scenarios) log(`  ${s.title}: ${s.paths.length} requests, e.g. ${s.paths[0]}`)
    const searches = scenarios.filter((s) => s.route === "search")
    const others = scenarios.filter((s) => s.route !== "search")

    log("Seeding")
    await dropDatabase()
    await withPg(settings.adminUrl, (admin) => admin.query(`CREATE DATABASE ${settings.databaseName}`))
    const seeded = await seedBoth(postgresUrl, sqliteUrl, settings.packages)
    const analyzeStarted = Date.now()
    const postgresVersion = await withPg(postgresUrl, async (client) => {
      await client.query("VACUUM (ANALYZE)")
      return String((await client.query("SHOW server_version")).rows[0]?.server_version ?? "?")
    })
    const analyze = Date.now() - analyzeStarted
    log(`  seeded PostgreSQL in ${seconds(seeded.postgres)} (+ ${seconds(analyze)} VACUUM ANALYZE), SQLite in ${seconds(seeded.sqlite)}`)

    log("Checking the baseline against the product (lists, detail) and against today's search SQL (searches)")
    await checkSqlParity(postgresUrl, others)
    await checkSqlParity(postgresUrl, searches, LegacyPackageStore.layer, "today's search SQL (LegacyPackageStore.ts)")
    const sql = await measureSql(postgresUrl, scenarios)

    const searchPaths = searches.flatMap((s) => s.paths)

    log("PostgreSQL: the product with its read cache on and off, the baseline, and search before/after, taking turns")
    const pgOn = await startMarketplace("product, cache on (PostgreSQL)", postgresUrl, "on")
    const pgOff = await startMarketplace("product, cache off (PostgreSQL)", postgresUrl, "off")
    const plain = await startBaseline(postgresUrl)
    const pgBefore = await startSearchServer("before", postgresUrl, "today's search SQL (PostgreSQL)")
    const pgAfter = await startSearchServer("after", postgresUrl, "search table (PostgreSQL)")
    await checkResponses(pgOff, others, plain)
    await checkResponses(pgBefore, searches, plain)
    await checkResponses(pgAfter, searches, pgOff)
    const answerBytes = await checkResponses(pgOn, scenarios, pgOff, " (filling its cache)")
    await checkResponses(pgOn, scenarios, pgOff, " (from its cache)")
    const loadBefore = logLoad("before the PostgreSQL runs")
    const otherWorkPostgres = await checkOtherWork("before the PostgreSQL runs")
    const postgres = await measureServers(
      { on: pgOn, off: pgOff, baseline: plain, before: pgBefore, after: pgAfter },
      scenarios,
      searchPaths,
      ["before", "after"]
    )
    for (const server of [pgOn, pgOff, plain, pgBefore, pgAfter]) await stopChild(server.child)

    log("SQLite: the product with its read cache on and off, and search before/after, taking turns")
    const sqliteOn = await startMarketplace("product, cache on (SQLite)", sqliteUrl, "on")
    const sqliteOff = await startMarketplace("product, cache off (SQLite)", sqliteUrl, "off")
    const sqliteBefore = await startSearchServer("before", sqliteUrl, "today's search SQL (SQLite)")
    const sqliteAfter = await startSearchServer("after", sqliteUrl, "search table (SQLite)")
    await checkResponses(sqliteOff, scenarios)
    await checkResponses(sqliteBefore, searches)
    await checkResponses(sqliteAfter, searches, sqliteOff)
    await checkResponses(sqliteOn, scenarios, sqliteOff, " (filling its cache)")
    await checkResponses(sqliteOn, scenarios, sqliteOff, " (from its cache)")
    const loadSqlite = logLoad("before the SQLite runs")
    const otherWorkSqlite = await checkOtherWork("before the SQLite runs")
    const sqlite = await measureServers(
      { on: sqliteOn, off: sqliteOff, before: sqliteBefore, after: sqliteAfter },
      scenarios,
      searchPaths,
      ["before", "after"]
    )
    for (const server of [sqliteOn, sqliteOff, sqliteBefore, sqliteAfter]) await stopChild(server.child)
    const loadAfter = logLoad("after the runs")

    log("Scaling: search and list latency in-process by catalogue size")
    const scaling: Array<ScaleRow> = []
    for (const size of scaleSizes()) {
      scaling.push(...await measureScaleSize(size, { postgres: postgresUrl, sqlite: sqliteUrl }, tmp))
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


// Ctrl-C or a kill: the child servers go too (the database is dropped by the next run).
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll()
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
