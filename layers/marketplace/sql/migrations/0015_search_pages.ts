/**
 * PostgreSQL: a public one-word page (and a 3-letter one) in one function call that returns the page's summaries,
 * with one plan per connection kept from its first call.
 *
 * Measured at 100,000 packages (docs/decisions.md, "Uncached search on PostgreSQL at 50 connections"): the walks
 * themselves took about 0.2 ms, but each request planned again what surrounded them. `clark_one_word` (0008) kept
 * its walk's plan, yet the statement joining its rows to packages and publishers was planned on every request (the
 * client prepares no statement), and so was the whole 3-letter statement; and PL/pgSQL plans a statement afresh for
 * its first five calls on every connection before it settles on one plan (for the 3-letter walk it never settled:
 * PostgreSQL kept planning per call). Here the join is inside the function, and `plan_cache_mode =
 * force_generic_plan` keeps one plan per connection from the first call: the plan of a walk in key order stopping at
 * the page size does not depend on the word (the 3-letter statement's per-call plans were that same walk).
 *
 * `clark_one_word` stays for servers of the previous release during an upgrade; this release no longer calls it.
 * SQLite plans nothing per request worth keeping (its statements are prepared and cached by the client).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The columns of a summary (Rows.ts `summaryColumns`), then the page's tier and the number of words walked. */
const page = `TABLE (id BIGINT, name TEXT, display_name TEXT, description TEXT, latest_version TEXT,
  category_slug TEXT, curation_status TEXT, keywords TEXT, indexed_at TEXT, updated_at TEXT,
  latest_published_at TEXT, publisher_slug TEXT, publisher_name TEXT, publisher_verified BOOLEAN,
  tier INTEGER, word_count BIGINT)`

const summary = `p.id, p.name::TEXT, p.display_name, p.description, p.latest_version, p.category_slug,
  p.curation_status, p.keywords, p.indexed_at, p.updated_at, p.latest_published_at::TEXT,
  pub.slug, pub.name, pub.verified`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.all([
        // The walk of clark_one_word (0008; SqlRelevance.ts explains it), then the summaries of its page.
        sql.unsafe(`CREATE FUNCTION clark_word_page(p_from TEXT, p_to TEXT, p_statuses TEXT, p_after_tier INTEGER,
            p_after_name TEXT, p_limit INTEGER, p_max_words INTEGER)
          RETURNS ${page}
          LANGUAGE plpgsql STABLE
          SET plan_cache_mode = force_generic_plan
          AS $$
          #variable_conflict use_column
          BEGIN
            RETURN QUERY
            WITH RECURSIVE w (term, n) AS (
              SELECT MIN(k.term), 1 FROM package_terms k WHERE k.term >= p_from AND k.term < p_to
              UNION ALL
              SELECT (SELECT MIN(k.term) FROM package_terms k WHERE k.term > w.term AND k.term < p_to), w.n + 1
              FROM w WHERE w.term IS NOT NULL AND w.n <= p_max_words
            ), words AS (SELECT w.term FROM w WHERE w.term IS NOT NULL),
            c AS (SELECT COUNT(*) AS n FROM words),
            r AS (
              SELECT DISTINCT a.package_id, a.tier, a.name, c.n
              FROM c, words ws CROSS JOIN LATERAL (
                SELECT t.package_id, t.tier, t.name FROM package_terms t JOIN packages p ON p.id = t.package_id
                WHERE t.term = ws.term AND (t.tier, t.name) > (p_after_tier, p_after_name)
                  AND p.curation_status = ANY (string_to_array(p_statuses, ','))
                  AND (c.n = 1 OR NOT EXISTS (SELECT 1 FROM package_terms h WHERE h.package_id = t.package_id
                    AND h.term >= p_from AND h.term < p_to AND h.tier < t.tier))
                ORDER BY t.tier, t.name LIMIT p_limit
              ) a
              ORDER BY 2, 3 LIMIT p_limit
            )
            SELECT ${summary}, r.tier::INTEGER, r.n
            FROM r JOIN packages p ON p.id = r.package_id LEFT JOIN publishers pub ON pub.id = p.publisher_id
            ORDER BY r.tier, r.name;
          END $$`),
        // One walk of the prefix table's key (0009) in (tier, name) order, stopping at the page size.
        sql.unsafe(`CREATE FUNCTION clark_prefix_page(p_prefix TEXT, p_statuses TEXT, p_after_tier INTEGER,
            p_after_name TEXT, p_limit INTEGER)
          RETURNS ${page}
          LANGUAGE plpgsql STABLE
          SET plan_cache_mode = force_generic_plan
          AS $$
          #variable_conflict use_column
          BEGIN
            RETURN QUERY
            SELECT ${summary}, t.tier::INTEGER, 1::BIGINT
            FROM package_prefixes t JOIN packages p ON p.id = t.package_id
              LEFT JOIN publishers pub ON pub.id = p.publisher_id
            WHERE t.prefix = p_prefix AND (t.tier, t.name) > (p_after_tier, p_after_name)
              AND p.curation_status = ANY (string_to_array(p_statuses, ','))
            ORDER BY t.tier, t.name LIMIT p_limit;
          END $$`)
      ], { discard: true }),
    orElse: () => Effect.void
  })
})
