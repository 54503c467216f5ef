/**
 * The search table: one narrow row per distinct word of a package, with the best field it appears in (its
 * tier) and the package name, keyed (term, tier, name). Relevance for one word walks this key in order and
 * stops at the page size, instead of ranking every match (tsvector `ts_rank` / FTS5 `bm25`) before LIMIT.
 * The full-text indexes stay: they still find the packages holding every word of a longer query.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { json, type Row, text } from "../Rows.js"
import { writeWords } from "../SearchTerms.js"

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

  // PostgreSQL plans every statement afresh here (the client prepares none), and a one-word page's statement
  // took longer to plan than a rare word's page to run: in a function its plan is kept per connection.
  // It walks each word starting with the term in (tier, name) order (SqlRelevance.ts explains the walk).
  yield* sql.onDialectOrElse({
    pg: () =>
      sql`CREATE FUNCTION clark_one_word(p_from TEXT, p_to TEXT, p_statuses TEXT, p_after_tier INTEGER,
          p_after_name TEXT, p_limit INTEGER, p_max_words INTEGER)
        RETURNS TABLE (r_package_id BIGINT, r_tier INTEGER, r_name TEXT, r_words BIGINT)
        LANGUAGE plpgsql STABLE
        -- A page's size, not the default 1,000: with 1,000 expected rows the caller's join to packages was
        -- planned as a hash join over the whole table (7 ms at 10,000 packages instead of 0.6).
        ROWS 20
        AS $$
        BEGIN
          RETURN QUERY
          WITH RECURSIVE w (term, n) AS (
            SELECT MIN(k.term), 1 FROM package_terms k WHERE k.term >= p_from AND k.term < p_to
            UNION ALL
            SELECT (SELECT MIN(k.term) FROM package_terms k WHERE k.term > w.term AND k.term < p_to), w.n + 1
            FROM w WHERE w.term IS NOT NULL AND w.n <= p_max_words
          ), words AS (SELECT w.term FROM w WHERE w.term IS NOT NULL),
          c AS (SELECT COUNT(*) AS n FROM words)
          SELECT DISTINCT a.package_id, a.tier::INTEGER, a.name::TEXT, c.n
          FROM c, words ws CROSS JOIN LATERAL (
            SELECT t.package_id, t.tier, t.name FROM package_terms t JOIN packages p ON p.id = t.package_id
            WHERE t.term = ws.term AND (t.tier, t.name) > (p_after_tier, p_after_name)
              AND p.curation_status = ANY (string_to_array(p_statuses, ','))
              AND (c.n = 1 OR NOT EXISTS (SELECT 1 FROM package_terms h WHERE h.package_id = t.package_id
                AND h.term >= p_from AND h.term < p_to AND h.tier < t.tier))
            ORDER BY t.tier, t.name LIMIT p_limit
          ) a
          ORDER BY 2, 3 LIMIT p_limit;
        END $$`,
    orElse: () => Effect.void
  })

  // Packages already stored get their rows, in chunks.
  let after = 0
  for (;;) {
    const rows = yield* sql.withoutTransforms()<Row>`SELECT id, name, display_name, keywords, description FROM packages
      WHERE id > ${after} ORDER BY id LIMIT 2000`
    if (rows.length === 0) break
    yield* writeWords(sql, rows.map((row) => ({
      id: Number(row.id),
      name: text(row.name),
      displayName: text(row.display_name),
      keywords: json<Array<string>>(row.keywords),
      description: text(row.description)
    })))
    after = Number(rows[rows.length - 1]!.id)
  }
})
