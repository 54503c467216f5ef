/**
 * The search table: one narrow row per distinct word of a package, with the best field it appears in (its
 * tier) and the package name, keyed (term, tier, name). Relevance for one word walks this key in order and
 * stops at the page size, instead of ranking every match (tsvector `ts_rank` / FTS5 `bm25`) before LIMIT.
 * The full-text indexes stay: they still find the packages holding every word of a longer query.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { json, type Row, text } from "../Rows.js"
import { writeTerms } from "../SearchTerms.js"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ref = sql.onDialectOrElse({ pg: () => sql.literal("BIGINT"), orElse: () => sql.literal("INTEGER") })
  // Byte order, as package names are ordered everywhere else, and for prefix ranges on terms.
  const ordered = sql.onDialectOrElse({ pg: () => sql.literal(`COLLATE "C"`), orElse: () => sql.literal("") })
  yield* sql.onDialectOrElse({
    // The package id rides in the key's index so that a walk never visits the table.
    pg: () =>
      sql`CREATE TABLE package_terms (
        term TEXT ${ordered} NOT NULL,
        tier SMALLINT NOT NULL,
        name TEXT ${ordered} NOT NULL,
        package_id ${ref} NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        PRIMARY KEY (term, tier, name) INCLUDE (package_id)
      )`,
    // WITHOUT ROWID: the rows live in the key's b-tree, so a walk reads them in order with nothing else.
    orElse: () =>
      sql`CREATE TABLE package_terms (
        term TEXT NOT NULL,
        tier INTEGER NOT NULL,
        name TEXT NOT NULL,
        package_id ${ref} NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        PRIMARY KEY (term, tier, name)
      ) WITHOUT ROWID`
  })
  // A package's own rows: replacing them on import, and its best tier for a prefix.
  yield* sql`CREATE INDEX package_terms_package ON package_terms (package_id, term, tier)`

  // Packages already stored get their rows, in chunks.
  let after = 0
  for (;;) {
    const rows = yield* sql.withoutTransforms()<Row>`SELECT id, name, display_name, keywords, description FROM packages
      WHERE id > ${after} ORDER BY id LIMIT 2000`
    if (rows.length === 0) break
    yield* writeTerms(sql, rows.map((row) => ({
      id: Number(row.id),
      name: text(row.name),
      displayName: text(row.display_name),
      keywords: json<Array<string>>(row.keywords),
      description: text(row.description)
    })))
    after = Number(rows[rows.length - 1]!.id)
  }
})
