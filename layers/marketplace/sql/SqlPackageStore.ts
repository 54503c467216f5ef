/** PackageStore on SQLite or PostgreSQL; the dialects differ only in full-text search. */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { LatestVersion, PackageDetail, VersionItem } from "../../../schema/marketplace/Package.js"
import { type Keyset, type PackageQuery, PackageStore } from "../../../services/marketplace/PackageStore.js"
import { bool, int, json, type Row, statusIn, summaryColumns, summaryFrom, text, textOrNull, toSummary } from "./Rows.js"
import { prefixRange, tierOfScore, weightOf } from "./SearchTerms.js"

/**
 * Past this many words starting with a one-word query's prefix, its matches are grouped and sorted rather than
 * walked word by word (each walk is a statement arm; SQLite allows 500 arms in a compound select).
 */
const maxArms = 48

export const make = Effect.gen(function*() {
  // Rows keep the column names the database returns (snake_case): the client's
  // camelCase copy of every row was the largest single cost of a page read.
  // Identifiers in the text are already snake_case, so the SQL is unchanged.
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

  const nameOf = (id: number) => sql`(SELECT name FROM packages WHERE id = ${id})`

  /** Text condition of a term list: every word matched as a prefix, through the full-text index. */
  const textMatch = (terms: ReadonlyArray<string>) =>
    dialect === "pg"
      ? { join: sql``, where: sql`p.search_vector @@ to_tsquery('simple', ${terms.map((term) => `${term}:*`).join(" & ")})` }
      : {
        join: sql`JOIN packages_fts ON packages_fts.rowid = p.id`,
        where: sql`packages_fts MATCH ${terms.map((term) => `"${term}"*`).join(" AND ")}`
      }

  /** The latest version's facets and platforms are kept per package. */
  const onLatest = (table: "package_facets" | "package_platforms", column: string, value: string) =>
    sql`EXISTS (SELECT 1 FROM ${sql(table)} x WHERE x.package_id = p.id AND ${sql(column)} = ${value})`

  /** The package's best tier for words starting with `term` (null when none). */
  const bestTier = (term: string, packageId: Statement.Fragment) => {
    const { from, to } = prefixRange(term)
    return sql`(SELECT MIN(h.tier) FROM package_terms h
      WHERE h.package_id = ${packageId} AND h.term >= ${from} AND h.term < ${to})`
  }

  /**
   * Words of the search table starting with `term`, at most `maxArms + 1` of them: one index seek each
   * (a loose index scan), never a walk over the packages that hold them.
   */
  const wordsStarting = (term: string) => {
    const { from, to } = prefixRange(term)
    return sql<Row>`WITH RECURSIVE w (term, n) AS (
        SELECT MIN(term), 1 FROM package_terms WHERE term >= ${from} AND term < ${to}
        UNION ALL
        SELECT (SELECT MIN(k.term) FROM package_terms k WHERE k.term > w.term AND k.term < ${to}), w.n + 1
        FROM w WHERE w.term IS NOT NULL AND w.n <= ${maxArms}
      ) SELECT term FROM w WHERE term IS NOT NULL`.pipe(Effect.map((rows) => rows.map((row) => text(row.term))))
  }

  /**
   * One word: the page in (tier, name) order. Each word starting with the term is its own walk of the search
   * key (term, tier, name) that stops at the page size; a package holding several of those words is taken at
   * its best tier only (the NOT EXISTS), so the walks never disagree about a package. Past `maxArms` words
   * (a one- or two-letter prefix) the matches are grouped and sorted instead.
   */
  const oneWordPage = (term: string, filters: ReadonlyArray<Statement.Fragment>, after: Keyset | undefined, limit: number) =>
    Effect.gen(function*() {
      const words = yield* wordsStarting(term)
      if (words.length === 0) return []
      const { from, to } = prefixRange(term)
      const resume = (alias: string) =>
        after === undefined
          ? sql`1 = 1`
          : sql`(${sql.literal(alias)}.tier, ${sql.literal(alias)}.name) > (${tierOfScore(Number(after.value))}, ${nameOf(after.id)})`
      const ranked = words.length > maxArms
        ? sql`SELECT m.package_id, m.tier, m.name
            FROM (SELECT t.package_id, MIN(t.tier) AS tier, t.name FROM package_terms t
              WHERE t.term >= ${from} AND t.term < ${to} GROUP BY t.package_id, t.name) m
            JOIN packages p ON p.id = m.package_id
            WHERE ${resume("m")} AND ${sql.and(filters)} ORDER BY m.tier, m.name LIMIT ${limit}`
        : sql`SELECT DISTINCT package_id, tier, name FROM (${
          sql.join(" UNION ALL ", false)(words.map((word, i) =>
            sql`SELECT * FROM (SELECT t.package_id, t.tier, t.name FROM package_terms t JOIN packages p ON p.id = t.package_id
              WHERE t.term = ${word} AND ${resume("t")} AND ${sql.and(filters)}${
              words.length === 1 ? sql`` : sql` AND NOT EXISTS (SELECT 1 FROM package_terms h
                WHERE h.package_id = t.package_id AND h.term >= ${from} AND h.term < ${to} AND h.tier < t.tier)`
            } ORDER BY t.tier, t.name LIMIT ${limit}) ${sql.literal(`a${i}`)}`)
          )
        }) u ORDER BY tier, name LIMIT ${limit}`
      const rows = yield* sql<Row>`SELECT ${sql.literal(summaryColumns)}, r.tier
        FROM (${ranked}) r JOIN packages p ON p.id = r.package_id LEFT JOIN publishers pub ON pub.id = p.publisher_id
        ORDER BY r.tier, r.name`
      return rows.map((row): Row => ({ ...row, score: weightOf(int(row.tier)) }))
    })

  /**
   * Several words: the packages holding all of them (full-text index), scored by the sum of each word's best
   * tier weight, then sorted. The score depends on the package and the query alone.
   */
  const wordsPage = (
    terms: ReadonlyArray<string>,
    filters: ReadonlyArray<Statement.Fragment>,
    after: Keyset | undefined,
    limit: number
  ) => {
    const match = textMatch(terms)
    const score = sql.join(" + ", false)(terms.map((term) =>
      sql`CASE ${bestTier(term, sql`p.id`)} WHEN 1 THEN 8 WHEN 2 THEN 4 WHEN 3 THEN 2 WHEN 4 THEN 1 ELSE 0 END`
    ))
    const ranked = sql`SELECT p.id, p.name, ${score} AS score
      FROM packages p ${match.join} WHERE ${sql.and([...filters, match.where])}`
    const resume = after === undefined
      ? sql`1 = 1`
      : sql`(s.score < ${after.value} OR (s.score = ${after.value} AND s.name > ${nameOf(after.id)}))`
    return sql<Row>`SELECT ${sql.literal(summaryColumns)}, t.score
      FROM (SELECT * FROM (${ranked}) s WHERE ${resume} ORDER BY s.score DESC, s.name ASC LIMIT ${limit}) t
      JOIN packages p ON p.id = t.id LEFT JOIN publishers pub ON pub.id = p.publisher_id
      ORDER BY t.score DESC, t.name ASC`
  }

  const find = (query: PackageQuery) =>
    Effect.gen(function*() {
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

      const rows: ReadonlyArray<Row> = yield* (() => {
        if (relevance) {
          return query.terms.length === 1
            ? oneWordPage(query.terms[0]!, filters, after, limit)
            : wordsPage(query.terms, filters, after, limit)
        }
        const match = hasTerms ? textMatch(query.terms) : undefined
        const conditions = match === undefined ? [...filters] : [...filters, match.where]
        if (ordering === "name") {
          if (after !== undefined) conditions.push(sql`p.name > ${nameOf(after.id)}`)
          return sql<Row>`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${match?.join ?? sql``}
              WHERE ${sql.and(conditions)} ORDER BY p.name ASC LIMIT ${limit}`
        }
        if (after !== undefined) {
          conditions.push(
            sql`(p.latest_published_at < ${after.value} OR (p.latest_published_at = ${after.value} AND p.name > ${
              nameOf(after.id)
            }))`
          )
        }
        return sql<Row>`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${match?.join ?? sql``}
              WHERE ${sql.and(conditions)} ORDER BY p.latest_published_at DESC, p.name ASC LIMIT ${limit}`
      })()

      const page = rows.slice(0, query.limit)
      const last = page[page.length - 1]
      const keyOf = (row: Row): Keyset => ({
        id: int(row.id),
        value: ordering === "relevance" ? Number(row.score) : ordering === "latest" ? text(row.latest_published_at) : null
      })
      return {
        items: page.map(toSummary),
        next: rows.length > query.limit && last !== undefined ? keyOf(last) : undefined
      }
    }).pipe(Effect.orDie)

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

export const layer = Layer.effect(PackageStore, make)
