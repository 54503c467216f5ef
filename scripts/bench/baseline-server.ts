/**
 * The baseline of `npm run bench:marketplace`: the three measured read routes (search, the
 * package list with filters, package detail) on plain `node:http` and `pg`, with no framework.
 *
 * It sends PostgreSQL the same SQL text as `layers/marketplace/sql/SqlPackageStore.ts` does for
 * these requests (the benchmark driver checks this before measuring, by capturing the product's
 * statements), through a `pg.Pool` of the product's size, and answers JSON of the same shape:
 * keywords and the latest version's documents are parsed and the same objects are built. Cursors
 * are produced (binding fingerprint and checksum, as much hashing as the product does) but not
 * accepted: the benchmark only reads first pages.
 *
 *   node --import tsx scripts/bench/baseline-server.ts --database postgres://… --port 8790
 */
import { createHash, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { pathToFileURL } from "node:url"
import pg from "pg"

/** The product's pool size (`max` of the pool built in layers/marketplace/sql/Database.ts). */
export const poolSize = 16

const publicStatuses = ["listed", "featured"] as const
const defaultLimit = 20
const maxTerms = 16

// ---------------------------------------------------------------------------
// SQL: the text SqlPackageStore compiles to on PostgreSQL, whitespace included
// ---------------------------------------------------------------------------

const summaryColumns = `p.id, p.name, p.display_name, p.description, p.latest_version, p.category_slug,
  p.curation_status, p.keywords, p.indexed_at, p.updated_at, p.latest_published_at,
  pub.slug AS publisher_slug, pub.name AS publisher_name, pub.verified AS publisher_verified`

const summaryFrom = `packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id`

export interface SqlQuery {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

/** Numbered placeholders in order of appearance, as the pg compiler of @effect/sql numbers them. */
class Placeholders {
  readonly values: Array<unknown> = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/**
 * The status condition with the statuses as literals, as the product writes it (planners match
 * partial indexes only against constants); the values come from a closed set, never from input.
 */
const statusIn = (statuses: ReadonlyArray<"listed" | "featured">): string =>
  `p.curation_status IN (${statuses.map((status) => `'${status}'`).join(", ")})`

/** `sql.and`: one clause stands alone, several are parenthesised. */
const and = (clauses: ReadonlyArray<string>): string => clauses.length === 1 ? clauses[0]! : `(${clauses.join(" AND ")})`

export type Ordering = "latest" | "name" | "relevance"

/** The parameters of GET /packages and GET /search that reach the query. */
export interface ListRequest {
  readonly q?: string | undefined
  readonly sort?: Ordering | undefined
  readonly category?: string | undefined
  readonly kind?: string | undefined
  readonly isolation?: string | undefined
  readonly platform?: string | undefined
  readonly publisher?: string | undefined
  readonly curation?: "listed" | "featured" | undefined
  readonly limit?: number | undefined
}

export const termsOf = (q: string | undefined): ReadonlyArray<string> =>
  (q ?? "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((term) => term.length > 0).slice(0, maxTerms)

export const orderingOf = (sort: Ordering | undefined, terms: ReadonlyArray<string>): Ordering =>
  terms.length === 0 ? (sort === "relevance" || sort === undefined ? "latest" : sort) : (sort ?? "relevance")

/** The statement of a first page, built in the order SqlPackageStore.find builds it. */
export const findSql = (request: ListRequest): SqlQuery => {
  const terms = termsOf(request.q)
  const ordering = orderingOf(request.sort, terms)
  const limit = (request.limit ?? defaultLimit) + 1
  const p = new Placeholders()
  const tsquery = terms.map((term) => `${term}:*`).join(" & ")
  const statuses = request.curation === undefined ? publicStatuses : [request.curation]
  // The latest version's facets and platforms are kept per package.
  const onLatest = (table: string, column: string, value: string) =>
    `EXISTS (SELECT 1 FROM "${table}" x WHERE x.package_id = p.id AND "x"."${column}" = ${p.add(value)})`

  const relevance = ordering === "relevance" && terms.length > 0
  // The score comes before the conditions in the text, so it takes the first placeholder.
  const score = relevance ? `ts_rank(p.search_vector, to_tsquery('simple', ${p.add(tsquery)}))::float8` : ""
  const conditions = [statusIn(statuses)]
  if (request.category !== undefined) conditions.push(`p.category_slug = ${p.add(request.category)}`)
  if (request.publisher !== undefined) {
    conditions.push(`p.publisher_id = (SELECT id FROM publishers WHERE slug = ${p.add(request.publisher)})`)
  }
  if (request.kind !== undefined) conditions.push(onLatest("package_facets", "kind", request.kind))
  if (request.isolation !== undefined) conditions.push(onLatest("package_facets", "isolation", request.isolation))
  if (request.platform !== undefined) conditions.push(onLatest("package_platforms", "platform", request.platform))
  if (terms.length > 0) conditions.push(`p.search_vector @@ to_tsquery('simple', ${p.add(tsquery)})`)
  const where = and(conditions)
  // PostgreSQL needs no join for full text (SQLite joins its FTS table here); the text keeps the gap.
  const join = ""

  const text = relevance
    ? `SELECT ${summaryColumns}, t.score
              FROM (SELECT * FROM (SELECT p.id, p.name, ${score} AS score
              FROM packages p ${join} WHERE ${where}) s WHERE 1 = 1 ORDER BY s.score DESC, s.name ASC LIMIT ${
      p.add(limit)
    }) t
              JOIN packages p ON p.id = t.id LEFT JOIN publishers pub ON pub.id = p.publisher_id
              ORDER BY t.score DESC, t.name ASC`
    : `SELECT ${summaryColumns} FROM ${summaryFrom} ${join}
              WHERE ${where} ORDER BY ${
      ordering === "name" ? "p.name ASC" : "p.latest_published_at DESC, p.name ASC"
    } LIMIT ${p.add(limit)}`
  return { text, values: p.values }
}

/** The detail statement of SqlPackageStore.detail. */
export const detailSql = (name: string): SqlQuery => {
  const p = new Placeholders()
  const text = `SELECT ${summaryColumns}, p.homepage, p.repository_url, p.license,
          v.version, v.published_at, v.indexed_at AS version_indexed_at, v.registry_integrity,
          v.tarball_sha512_verified, v.has_provenance, v.readme_html, v.platforms, v.facets, v.permissions,
          v.previews, v.security_checks, (SELECT COALESCE(json_agg(json_build_object('version', x.version, 'publishedAt', x.published_at)
          ORDER BY x.published_at DESC, x.id DESC), '[]')::text FROM package_versions x WHERE x.package_id = p.id) AS version_list
        FROM ${summaryFrom}
          LEFT JOIN package_versions v ON v.package_id = p.id AND v.version = p.latest_version
        WHERE p.name = ${p.add(name)} AND ${statusIn(publicStatuses)}`
  return { text, values: p.values }
}

// ---------------------------------------------------------------------------
// Rows to JSON
// ---------------------------------------------------------------------------

type Row = Record<string, any>

const str = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

const summary = (row: Row) => ({
  name: row.name as string,
  displayName: row.display_name as string,
  description: row.description as string,
  latestVersion: str(row.latest_version),
  publisher: row.publisher_slug === null
    ? null
    : { slug: row.publisher_slug as string, name: row.publisher_name as string, verified: row.publisher_verified === true },
  categorySlug: str(row.category_slug),
  curationStatus: row.curation_status as string,
  keywords: JSON.parse(row.keywords) as Array<string>,
  indexedAt: str(row.indexed_at),
  updatedAt: row.updated_at as string
})

const digest = (value: string, length: number) => createHash("sha256").update(value).digest("base64url").slice(0, length)

const cursorOf = (binding: string, value: unknown, id: number): string => {
  const payload = Buffer.from(JSON.stringify([1, binding, value, id])).toString("base64url")
  return `${payload}.${digest(payload, 8)}`
}

const listPage = async (pool: pg.Pool, request: ListRequest, route: "packages" | "search") => {
  const terms = termsOf(request.q)
  const ordering = orderingOf(request.sort, terms)
  const binding = digest(JSON.stringify([route, terms.join(" "), ordering, request]), 12)
  const { text, values } = findSql(request)
  const { rows } = await pool.query<Row>(text, values as Array<unknown>)
  const limit = request.limit ?? defaultLimit
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const keyValue = (row: Row) =>
    ordering === "relevance" && terms.length > 0
      ? Number(row.score)
      : ordering === "latest"
      ? row.latest_published_at
      : null
  return {
    items: page.map(summary),
    nextCursor: rows.length > limit && last !== undefined ? cursorOf(binding, keyValue(last), Number(last.id)) : null
  }
}

const packageDetail = async (pool: pg.Pool, name: string) => {
  const detail = detailSql(name)
  const { rows: [row] } = await pool.query<Row>(detail.text, detail.values as Array<unknown>)
  if (row === undefined) return undefined
  const latest = row.version === null ? null : {
    version: row.version as string,
    publishedAt: row.published_at as string,
    indexedAt: row.version_indexed_at as string,
    registryIntegrity: row.registry_integrity as string,
    tarballSha512Verified: row.tarball_sha512_verified === true,
    hasProvenance: row.has_provenance === true,
    readmeHtml: str(row.readme_html),
    platforms: JSON.parse(row.platforms) as unknown,
    facets: JSON.parse(row.facets) as unknown,
    permissions: JSON.parse(row.permissions) as unknown,
    previews: JSON.parse(row.previews) as unknown,
    securityChecks: JSON.parse(row.security_checks) as unknown
  }
  return {
    ...summary(row),
    homepage: str(row.homepage),
    repositoryUrl: str(row.repository_url),
    license: str(row.license),
    latest,
    versions: JSON.parse(row.version_list) as Array<{ version: string; publishedAt: string }>
  }
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

class RequestProblem extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

const sorts: ReadonlyArray<string> = ["latest", "name", "relevance"]

export const listRequest = (query: URLSearchParams): ListRequest => {
  const optional = (key: string) => query.get(key) ?? undefined
  const q = optional("q")
  if (q !== undefined && q.length > 200) throw new RequestProblem(400, "validation_failed", "Invalid request: q")
  const sort = optional("sort")
  if (sort !== undefined && !sorts.includes(sort)) throw new RequestProblem(400, "validation_failed", "Invalid request: sort")
  const curation = optional("curation")
  if (curation !== undefined && curation !== "listed" && curation !== "featured") {
    throw new RequestProblem(400, "validation_failed", "Invalid request: curation")
  }
  const limitText = optional("limit")
  const limit = limitText === undefined ? undefined : Number(limitText)
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
    throw new RequestProblem(400, "validation_failed", "Invalid request: limit")
  }
  return {
    q,
    sort: sort as Ordering | undefined,
    category: optional("category"),
    kind: optional("kind"),
    isolation: optional("isolation"),
    platform: optional("platform"),
    publisher: optional("publisher"),
    curation,
    limit
  }
}

const send = (response: ServerResponse, status: number, body: unknown, requestId: string) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": requestId
  })
  response.end(text)
}

const prefix = "/api/v1"

const route = async (pool: pg.Pool, request: IncomingMessage): Promise<unknown> => {
  const url = request.url ?? "/"
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  const query = new URLSearchParams(mark === -1 ? "" : url.slice(mark + 1))
  if (request.method === "GET" && path.startsWith(prefix)) {
    const rest = path.slice(prefix.length)
    if (rest === "/health") {
      await pool.query("SELECT 1 AS ok")
      return { status: "ok" }
    }
    if (rest === "/search") {
      const params = listRequest(query)
      return { query: params.q ?? "", ...(await listPage(pool, params, "search")) }
    }
    if (rest === "/packages") return listPage(pool, listRequest(query), "packages")
    if (rest.startsWith("/packages/") && rest.indexOf("/", "/packages/".length) === -1) {
      const name = decodeURIComponent(rest.slice("/packages/".length))
      const detail = await packageDetail(pool, name)
      if (detail === undefined) throw new RequestProblem(404, "not_found", `No package named ${name}`)
      return detail
    }
  }
  throw new RequestProblem(404, "not_found", "No such route")
}

export const startBaseline = (databaseUrl: string, port: number, host = "127.0.0.1") => {
  // The product's pool options: the same size, JIT off for the session.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: poolSize,
    application_name: "clark-bench-baseline",
    options: "-c jit=off"
  })
  pool.on("error", () => {})
  const server = createServer((request, response) => {
    const requestId = randomUUID()
    route(pool, request).then(
      (body) => send(response, 200, body, requestId),
      (error: unknown) =>
        error instanceof RequestProblem
          ? send(response, error.status, { error: { code: error.code, message: error.message, requestId } }, requestId)
          : send(response, 500, { error: { code: "internal_error", message: "Internal error", requestId } }, requestId)
    )
  })
  server.listen(port, host)
  return {
    server,
    close: () => new Promise<void>((resolve) => server.close(() => void pool.end().then(() => resolve())))
  }
}

const option = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? undefined : process.argv[at + 1]
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const database = option("database")
  const port = Number(option("port") ?? "8790")
  if (database === undefined) {
    console.error("usage: baseline-server.ts --database postgres://… [--port N]")
    process.exit(2)
  }
  const baseline = startBaseline(database, port)
  const stop = () => void baseline.close().then(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}
