/**
 * Checks before measuring: the baseline sends the product's SQL text, the servers answer equal bodies; and the
 * database-side figures (matching rows, the SQL alone).
 */
import { type SqlClient, Statement } from "@effect/sql"
import { Effect, Either, Layer, Schema } from "effect"
import { isDeepStrictEqual } from "node:util"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { ListParams, publicStatuses } from "../../../schema/marketplace/Package.js"
import * as Listing from "../../../services/marketplace/Listing.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { detailSql, findSql, listRequest, type SqlQuery } from "../baseline-server.js"
import { log } from "../Common.js"
import type { Server } from "./Servers.js"
import { median, spread, withPg } from "./Settings.js"
import { detailNameOf, type Scenario, searchParamsOf } from "./Workload.js"

const collapse = (text: string) => text.replace(/\s+/g, " ").trim()

/**
 * Runs a PackageStore (the product's, or for searches today's, LegacyPackageStore.ts) for every request and
 * compares its statements with the baseline's: the baseline searches with today's SQL.
 */
export const checkSqlParity = async (
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
export const checkResponses = async (server: Server, scenarios: ReadonlyArray<Scenario>, reference?: Server, note = "") => {
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

export interface SqlFigures {
  /** Median number of matching packages over the scenario's requests (list and search). */
  readonly matches: number | undefined
  /** Median time of the scenario's statements, one at a time on one connection. */
  readonly sqlMs: number
}

export const measureSql = (url: string, scenarios: ReadonlyArray<Scenario>) =>
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
