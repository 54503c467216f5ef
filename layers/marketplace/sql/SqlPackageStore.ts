/** PackageStore on SQLite or PostgreSQL; the dialects differ only in full-text search. */
import { SqlClient, type SqlError, type Statement } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { LatestVersion, PackageDetail, VersionItem } from "../../../schema/marketplace/Package.js"
import { type Keyset, type PackageQuery, PackageStore } from "../../../services/marketplace/PackageStore.js"
import {
  bool,
  int,
  json,
  type Row,
  statusIn,
  summaryAt,
  summaryColumns,
  summaryFrom,
  summaryOf,
  text,
  textOrNull,
  toSummary,
  type Values
} from "./Rows.js"
import { makeRelevance, type RelevanceOptions, scoreOf } from "./SqlRelevance.js"

/** The store; `options` only for the benchmark, which measures the search a 3-letter word had before 0009. */
export const makeWith = (options?: RelevanceOptions) => Effect.gen(function*() {
  // Rows keep the column names the database returns (snake_case): the client's
  // camelCase copy of every row was the largest single cost of a page read.
  // Identifiers in the text are already snake_case, so the SQL is unchanged.
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

  const nameOf = (id: number) => sql`(SELECT name FROM packages WHERE id = ${id})`

  const search = makeRelevance(sql, nameOf, options)

  /** The latest version's facets and platforms are kept per package. */
  const onLatest = (table: "package_facets" | "package_platforms", column: string, value: string) =>
    sql`EXISTS (SELECT 1 FROM ${sql(table)} x WHERE x.package_id = p.id AND ${sql(column)} = ${value})`

  const find = (query: PackageQuery) => {
    // Every list and search runs this: one map over the statement, not a generator, which costs several times more.
    const filters: Array<Statement.Fragment> = [sql.literal(statusIn("p.curation_status", query.statuses))]
    if (query.category !== undefined) filters.push(sql`p.category_slug = ${query.category}`)
    if (query.publisher !== undefined) {
      filters.push(sql`p.publisher_id = (SELECT id FROM publishers WHERE slug = ${query.publisher})`)
    }
    if (query.kind !== undefined) filters.push(onLatest("package_facets", "x.kind", query.kind))
    if (query.isolation !== undefined) filters.push(onLatest("package_facets", "x.isolation", query.isolation))
    if (query.platform !== undefined) filters.push(onLatest("package_platforms", "x.platform", query.platform))

    const hasTerms = query.terms.length > 0
    const relevance = query.ordering === "relevance" && hasTerms
    const ordering = relevance ? "relevance" : query.ordering === "name" ? "name" : "latest"
    const after = query.after
    const limit = query.limit + 1

    // Read positionally (Rows.ts `summaryOf`): better-sqlite3 and pg build no object per row.
    const rows: Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError> = (() => {
      if (relevance) {
        return query.terms.length === 1
          ? search.oneWord(query.terms[0]!, filters.length === 1 ? query.statuses : undefined, filters, after, limit)
          : search.severalWords(query.terms, filters, after, limit)
      }
      const match = hasTerms ? search.textMatch(query.terms) : undefined
      const conditions = match === undefined ? [...filters] : [...filters, match.where]
      if (ordering === "name") {
        if (after !== undefined) conditions.push(sql`p.name > ${nameOf(after.id)}`)
        return sql`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${match?.join ?? sql``}
            WHERE ${sql.and(conditions)} ORDER BY p.name ASC LIMIT ${limit}`.values
      }
      if (after !== undefined) {
        conditions.push(
          sql`(p.latest_published_at < ${after.value} OR (p.latest_published_at = ${after.value} AND p.name > ${
            nameOf(after.id)
          }))`
        )
      }
      return sql`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${match?.join ?? sql``}
            WHERE ${sql.and(conditions)} ORDER BY p.latest_published_at DESC, p.name ASC LIMIT ${limit}`.values
    })()

    const keyOf = (row: Values): Keyset => ({
      id: int(row[summaryAt.id]),
      value: ordering === "relevance"
        ? scoreOf(row, query.terms.length > 1)
        : ordering === "latest"
        ? text(row[summaryAt.latestPublishedAt])
        : null
    })
    return rows.pipe(
      Effect.map((rows) => {
        const page = rows.length > query.limit ? rows.slice(0, query.limit) : rows
        const last = page[page.length - 1]
        return {
          items: page.map(summaryOf),
          next: rows.length > query.limit && last !== undefined ? keyOf(last) : undefined
        }
      }),
      Effect.orDie
    )
  }

  const visible = (name: string, statuses: PackageQuery["statuses"]) =>
    sql`p.name = ${name} AND ${sql.literal(statusIn("p.curation_status", statuses))}`

  /**
   * Every version of the package `p`, newest first, as a JSON array of `{version, publishedAt}` (keys in the
   * schema's order): the detail is one statement, not a second round trip per request.
   */
  const versionList = sql.literal(
    dialect === "pg"
      ? `(SELECT COALESCE(json_agg(json_build_object('version', x.version, 'publishedAt', x.published_at)
          ORDER BY x.published_at DESC, x.id DESC), '[]')::text FROM package_versions x WHERE x.package_id = p.id)`
      : `(SELECT json_group_array(json_object('version', x.version, 'publishedAt', x.published_at)
          ORDER BY x.published_at DESC, x.id DESC) FROM package_versions x WHERE x.package_id = p.id)`
  )

  const versionItem = (row: Row, indexedAt: unknown = row.indexed_at): VersionItem => ({
    version: text(row.version),
    publishedAt: text(row.published_at),
    indexedAt: text(indexedAt),
    registryIntegrity: text(row.registry_integrity),
    tarballSha512Verified: bool(row.tarball_sha512_verified),
    hasProvenance: bool(row.has_provenance)
  })

  const detail: PackageStore["Type"]["detail"] = (name, statuses) =>
    Effect.gen(function*() {
      const [row] = yield* sql<Row>`SELECT ${sql.literal(summaryColumns)}, p.homepage, p.repository_url, p.license,
          v.version, v.published_at, v.indexed_at AS version_indexed_at, v.registry_integrity,
          v.tarball_sha512_verified, v.has_provenance, v.readme_html, v.platforms, v.facets, v.permissions,
          v.previews, v.security_checks, ${versionList} AS version_list
        FROM ${sql.literal(summaryFrom)}
          LEFT JOIN package_versions v ON v.package_id = p.id AND v.version = p.latest_version
        WHERE ${visible(name, statuses)}`
      if (row === undefined) return Option.none()
      const latest: LatestVersion | null = row.version === null || row.version === undefined ? null : {
        ...versionItem(row, row.version_indexed_at),
        readmeHtml: textOrNull(row.readme_html),
        platforms: json(row.platforms),
        facets: json(row.facets),
        permissions: json(row.permissions),
        previews: json(row.previews),
        securityChecks: json(row.security_checks)
      }
      const result: PackageDetail = {
        ...toSummary(row),
        homepage: textOrNull(row.homepage),
        repositoryUrl: textOrNull(row.repository_url),
        license: textOrNull(row.license),
        latest,
        versions: json<PackageDetail["versions"]>(row.version_list)
      }
      return Option.some(result)
    }).pipe(Effect.orDie)

  const versions: PackageStore["Type"]["versions"] = (name, statuses) =>
    Effect.gen(function*() {
      const [pkg] = yield* sql<Row>`SELECT p.id FROM packages p WHERE ${visible(name, statuses)}`
      if (pkg === undefined) return Option.none()
      const rows = yield* sql<Row>`SELECT version, published_at, indexed_at, registry_integrity,
          tarball_sha512_verified, has_provenance
        FROM package_versions WHERE package_id = ${pkg.id} ORDER BY published_at DESC, id DESC`
      return Option.some(rows.map((row) => versionItem(row)))
    }).pipe(Effect.orDie)

  const release: PackageStore["Type"]["release"] = (name, version, statuses) =>
    Effect.gen(function*() {
      const which = version === undefined ? sql`v.version = p.latest_version` : sql`v.version = ${version}`
      const [row] = yield* sql<Row>`SELECT p.name, v.version, v.registry_integrity
        FROM packages p JOIN package_versions v ON v.package_id = p.id
        WHERE ${visible(name, statuses)} AND ${which}`
      return row === undefined
        ? Option.none()
        : Option.some({ name: text(row.name), version: text(row.version), integrity: text(row.registry_integrity) })
    }).pipe(Effect.orDie)

  return PackageStore.of({ find, detail, versions, release })
})

export const make = makeWith()

export const layer = Layer.effect(PackageStore, make)
