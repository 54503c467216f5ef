/**
 * The benchmark's "before": PackageStore as it searched before the search table (migration 0008), its SQL
 * text kept verbatim: relevance ranks every match with `ts_rank` over the tsvector (PostgreSQL) or FTS5
 * `bm25` (SQLite) before LIMIT. Only `find` differs; detail, versions and release are the product's own.
 * Selected per server in the same run (scripts/bench/marketplace/SearchServer.ts), so before and after share
 * the machine, the data and the framework.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Layer } from "effect"
import { int, type Row, statusIn, summaryColumns, summaryFrom, text, toSummary } from "../../../layers/marketplace/sql/Rows.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { type Keyset, type PackageQuery, PackageStore } from "../../../services/marketplace/PackageStore.js"

export const make = Effect.gen(function*() {
  const product = yield* SqlPackageStore.make
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

  const nameOf = (id: number) => sql`(SELECT name FROM packages WHERE id = ${id})`

  const textSearch = (terms: ReadonlyArray<string>) => {
    if (dialect === "pg") {
      const query = sql`to_tsquery('simple', ${terms.map((term) => `${term}:*`).join(" & ")})`
      return {
        join: sql``,
        where: sql`p.search_vector @@ ${query}`,
        score: sql`ts_rank(p.search_vector, ${query})::float8`
      }
    }
    return {
      join: sql`JOIN packages_fts ON packages_fts.rowid = p.id`,
      where: sql`packages_fts MATCH ${terms.map((term) => `"${term}"*`).join(" AND ")}`,
      score: sql`-bm25(packages_fts, 10.0, 5.0, 2.0, 1.0)`
    }
  }

  const onLatest = (table: "package_facets" | "package_platforms", column: string, value: string) =>
    sql`EXISTS (SELECT 1 FROM ${sql(table)} x WHERE x.package_id = p.id AND ${sql(column)} = ${value})`

  const find = (query: PackageQuery) =>
    Effect.gen(function*() {
      const conditions: Array<Statement.Fragment> = [sql.literal(statusIn("p.curation_status", query.statuses))]
      if (query.category !== undefined) conditions.push(sql`p.category_slug = ${query.category}`)
      if (query.publisher !== undefined) {
        conditions.push(sql`p.publisher_id = (SELECT id FROM publishers WHERE slug = ${query.publisher})`)
      }
      if (query.kind !== undefined) conditions.push(onLatest("package_facets", "x.kind", query.kind))
      if (query.isolation !== undefined) conditions.push(onLatest("package_facets", "x.isolation", query.isolation))
      if (query.platform !== undefined) conditions.push(onLatest("package_platforms", "x.platform", query.platform))

      const search = query.terms.length > 0 ? textSearch(query.terms) : undefined
      if (search) conditions.push(search.where)
      const relevance = query.ordering === "relevance" && search !== undefined
      const ordering = relevance ? "relevance" : query.ordering === "name" ? "name" : "latest"
      const after = query.after
      const limit = query.limit + 1

      const rows: ReadonlyArray<Row> = yield* (() => {
        switch (ordering) {
          case "relevance": {
            const ranked = sql`SELECT p.id, p.name, ${search!.score} AS score
              FROM packages p ${search!.join} WHERE ${sql.and(conditions)}`
            const resume = after === undefined
              ? sql`1 = 1`
              : sql`(s.score < ${after.value} OR (s.score = ${after.value} AND s.name > ${nameOf(after.id)}))`
            return sql<Row>`SELECT ${sql.literal(summaryColumns)}, t.score
              FROM (SELECT * FROM (${ranked}) s WHERE ${resume} ORDER BY s.score DESC, s.name ASC LIMIT ${limit}) t
              JOIN packages p ON p.id = t.id LEFT JOIN publishers pub ON pub.id = p.publisher_id
              ORDER BY t.score DESC, t.name ASC`
          }
          case "name": {
            if (after !== undefined) conditions.push(sql`p.name > ${nameOf(after.id)}`)
            return sql<Row>`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${search?.join ?? sql``}
              WHERE ${sql.and(conditions)} ORDER BY p.name ASC LIMIT ${limit}`
          }
          case "latest": {
            if (after !== undefined) {
              conditions.push(
                sql`(p.latest_published_at < ${after.value} OR (p.latest_published_at = ${after.value} AND p.name > ${
                  nameOf(after.id)
                }))`
              )
            }
            return sql<Row>`SELECT ${sql.literal(summaryColumns)} FROM ${sql.literal(summaryFrom)} ${search?.join ?? sql``}
              WHERE ${sql.and(conditions)} ORDER BY p.latest_published_at DESC, p.name ASC LIMIT ${limit}`
          }
        }
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

  return PackageStore.of({ ...product, find })
})

export const layer = Layer.effect(PackageStore, make)
