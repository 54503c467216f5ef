/**
 * Relevance pages on SQLite and PostgreSQL. A package's score for a query is the sum, over the query's words,
 * of the weight of the best field holding a word that starts with it (name 8, displayName 4, keywords 2,
 * description 1; SearchTerms.ts), except for several words on PostgreSQL, which keep `ts_rank`. Either depends
 * on the package and the query only, so a cursor holding the last score resumes in the same place however the
 * catalogue grows (bm25's corpus statistics did not). Ties go by name.
 *
 * Measured on 100,000 synthetic packages (docs/benchmarks.md), ranking every match before LIMIT (`ts_rank`,
 * `bm25`) was nearly all of a common word's cost; one word now walks the search table's (term, tier, name) key
 * and stops at the page size; a 3-letter word walks the prefix table's (prefix, tier, name) key instead (one walk
 * where the words starting with it took one each).
 */
import type { SqlClient, SqlError, Statement } from "@effect/sql"
import { Effect } from "effect"
import type { Keyset } from "../../../services/marketplace/PackageStore.js"
import { int, type Row, summaryColumns, summaryWidth, text, type Values } from "./Rows.js"
import { isStoredPrefix, prefixRange, tierOfScore, weightOf } from "./SearchTerms.js"

/**
 * Past this many words starting with a one-word query, its matches are grouped and sorted instead of walked
 * word by word (a one- or two-letter prefix; SQLite also allows at most 500 arms in a compound select).
 */
const maxWalks = 48

type Filters = ReadonlyArray<Statement.Fragment>

/**
 * The score of a relevance row (read positionally): the statement's own for several words, else the weight of the
 * tier the walk found it at; either follows the summary's columns. Read for the page's last row only (its cursor):
 * adding it to every row copied each one, which cost as much CPU as building the page's summaries.
 */
export const scoreOf = (row: Values, severalWords: boolean): number =>
  severalWords ? Number(row[summaryWidth]) : weightOf(int(row[summaryWidth]))

/** Where a one-word page's row holds the number of words walked (after its tier). */
const wordCountAt = summaryWidth + 1

export interface RelevanceOptions {
  /**
   * Whether 3-letter words use the prefix table (migration 0009). Always on in the product; the benchmark turns
   * it off to measure the word walk it replaced beside it, on the same data.
   */
  readonly prefixTable: boolean
}

export const makeRelevance = (
  sql: SqlClient.SqlClient,
  nameOf: (id: number) => Statement.Fragment,
  options: RelevanceOptions = { prefixTable: true }
) => {
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })

  /** Every word matched as a prefix, through the full-text index (tsvector + GIN, FTS5). */
  const textMatch = (terms: ReadonlyArray<string>) =>
    dialect === "pg"
      ? { join: sql``, where: sql`p.search_vector @@ to_tsquery('simple', ${terms.map((term) => `${term}:*`).join(" & ")})` }
      : {
        join: sql`JOIN packages_fts ON packages_fts.rowid = p.id`,
        where: sql`packages_fts MATCH ${terms.map((term) => `"${term}"*`).join(" AND ")}`
      }

  /** Words of the search table starting with `term`, at most `maxWalks + 1`: one index seek each. */
  const wordsCte = (term: string) => {
    const { from, to } = prefixRange(term)
    return sql`WITH RECURSIVE w (term, n) AS (
        SELECT MIN(term), 1 FROM package_terms WHERE term >= ${from} AND term < ${to}
        UNION ALL
        SELECT (SELECT MIN(k.term) FROM package_terms k WHERE k.term > w.term AND k.term < ${to}), w.n + 1
        FROM w WHERE w.term IS NOT NULL AND w.n <= ${maxWalks}
      )`
  }

  const resumeAfter = (alias: string, after: Keyset | undefined) =>
    after === undefined
      ? sql`1 = 1`
      : sql`(${sql.literal(alias)}.tier, ${sql.literal(alias)}.name) > (${tierOfScore(Number(after.value))}, ${
        nameOf(after.id)
      })`

  /**
   * The walk of one word's rows in (tier, name) order, stopping at the page size. When several words start
   * with the term, a package holding more than one of them is taken at its best tier only (NOT EXISTS), so
   * no two walks disagree about where a package belongs.
   */
  const walk = (
    word: Statement.Fragment,
    term: string,
    several: boolean | Statement.Fragment,
    filters: Filters,
    after: Keyset | undefined,
    limit: number
  ) => {
    const { from, to } = prefixRange(term)
    const notBetter = sql`NOT EXISTS (SELECT 1 FROM package_terms h
      WHERE h.package_id = t.package_id AND h.term >= ${from} AND h.term < ${to} AND h.tier < t.tier)`
    const best = several === false ? sql`` : several === true ? sql` AND ${notBetter}` : sql` AND (NOT (${several}) OR ${notBetter})`
    return sql`SELECT t.package_id, t.tier, t.name FROM package_terms t JOIN packages p ON p.id = t.package_id
      WHERE t.term = ${word} AND ${resumeAfter("t", after)} AND ${sql.and(filters)}${best}
      ORDER BY t.tier, t.name LIMIT ${limit}`
  }

  /** Many words start with the term: group its matches per package and sort them. */
  const grouped = (term: string, filters: Filters, after: Keyset | undefined, limit: number) => {
    const { from, to } = prefixRange(term)
    return sql`SELECT m.package_id, m.tier, m.name
      FROM (SELECT t.package_id, MIN(t.tier) AS tier, t.name FROM package_terms t
        WHERE t.term >= ${from} AND t.term < ${to} GROUP BY t.package_id, t.name) m
      JOIN packages p ON p.id = m.package_id
      WHERE ${resumeAfter("m", after)} AND ${sql.and(filters)} ORDER BY m.tier, m.name LIMIT ${limit}`
  }

  /** The tier and name a page resumes after, as the functions of migration 0015 take them. */
  const resumeArguments = (after: Keyset | undefined) => ({
    afterTier: after === undefined ? 0 : tierOfScore(Number(after.value)),
    afterName: after === undefined ? sql`''` : nameOf(after.id)
  })

  const summaries = (ranked: Statement.Fragment, cte: Statement.Fragment = sql``) =>
    sql`${cte} SELECT ${sql.literal(summaryColumns)}, r.tier
      FROM (${ranked}) r JOIN packages p ON p.id = r.package_id LEFT JOIN publishers pub ON pub.id = p.publisher_id
      ORDER BY r.tier, r.name`.values

  /**
   * The walk of one word's (or a 3-letter prefix's) rows in key order, reading each kept row's summary as it goes:
   * one pass, where walking first and joining the page's rows to packages again after read each package twice,
   * behind a subquery and a DISTINCT that one walk does not need (SQLite: 130-150 µs of a common word's page
   * against 75-110; docs/decisions.md, "Search pages read as arrays").
   */
  const flatWalk = (
    table: "package_terms" | "package_prefixes",
    key: Statement.Fragment,
    filters: Filters,
    after: Keyset | undefined,
    limit: number
  ) =>
    sql`SELECT ${sql.literal(summaryColumns)}, t.tier FROM ${sql.literal(table)} t JOIN packages p ON p.id = t.package_id
      LEFT JOIN publishers pub ON pub.id = p.publisher_id
      WHERE ${key} AND ${resumeAfter("t", after)} AND ${sql.and(filters)}
      ORDER BY t.tier, t.name LIMIT ${limit}`.values

  /**
   * One word, PostgreSQL: the words, their count and their walks in one statement (LATERAL), so it is planned
   * once whatever the number of words (PostgreSQL plans every statement here afresh, and a second round trip
   * measured dearer than the bigger plan). Only an empty page asks again whether there were too many words.
   */
  const oneWordPg = (term: string, filters: Filters, after: Keyset | undefined, limit: number) =>
    Effect.gen(function*() {
      const count = sql`(SELECT COUNT(*) FROM w WHERE term IS NOT NULL)`
      const walks = sql`SELECT DISTINCT a.package_id, a.tier, a.name FROM (SELECT term FROM w WHERE term IS NOT NULL) ws
        CROSS JOIN LATERAL (${walk(sql`ws.term`, term, sql`${count} > 1`, filters, after, limit)}) a
        ORDER BY a.tier, a.name LIMIT ${limit}`
      const rows = yield* sql`${wordsCte(term)} SELECT ${sql.literal(summaryColumns)}, r.tier, ${count} AS word_count
        FROM (${walks}) r JOIN packages p ON p.id = r.package_id LEFT JOIN publishers pub ON pub.id = p.publisher_id
        ORDER BY r.tier, r.name`.values
      const words = rows.length > 0
        ? int(rows[0]![wordCountAt])
        : int((yield* sql<Row>`${wordsCte(term)} SELECT ${count} AS n`)[0]?.n ?? 0)
      if (words > maxWalks) return yield* summaries(grouped(term, filters, after, limit))
      return rows
    })

  /**
   * One word, PostgreSQL, filtered by curation status only (every public search): the same walk in
   * `clark_word_page` (migration 0015), which also reads the page's summaries, with one plan per connection.
   */
  const oneWordPgStatuses = (
    term: string,
    statuses: ReadonlyArray<string>,
    filters: Filters,
    after: Keyset | undefined,
    limit: number
  ): Effect.Effect<ReadonlyArray<Values>, SqlError.SqlError> => {
    // Every public search of a longer word runs this: flatMaps, not a generator, which costs several times more.
    const { from, to } = prefixRange(term)
    const { afterName, afterTier } = resumeArguments(after)
    return Effect.flatMap(
      sql`SELECT * FROM clark_word_page(${from}, ${to}, ${statuses.join(",")}, ${afterTier},
        ${afterName}, ${limit}, ${maxWalks})`.values,
      (rows) => {
        if (rows.length > 0 && int(rows[0]![wordCountAt]) <= maxWalks) return Effect.succeed(rows)
        const words = rows.length > 0
          ? Effect.succeed(int(rows[0]![wordCountAt]))
          : Effect.map(sql<Row>`${wordsCte(term)} SELECT COUNT(*) AS n FROM w WHERE term IS NOT NULL`, (r) => int(r[0]?.n ?? 0))
        return Effect.flatMap(words, (n) => n > maxWalks ? summaries(grouped(term, filters, after, limit)) : Effect.succeed(rows))
      }
    )
  }

  /** One word, SQLite: the words first, then one arm per word (no LATERAL); both run in-process. */
  const oneWordSqlite = (term: string, filters: Filters, after: Keyset | undefined, limit: number) =>
    Effect.gen(function*() {
      const words = (yield* sql<Row>`${wordsCte(term)} SELECT term FROM w WHERE term IS NOT NULL`).map((row) => text(row.term))
      if (words.length === 0) return []
      if (words.length > maxWalks) return yield* summaries(grouped(term, filters, after, limit))
      if (words.length === 1) return yield* flatWalk("package_terms", sql`t.term = ${words[0]!}`, filters, after, limit)
      const arms = words.map((word, i) =>
        sql`SELECT * FROM (${walk(sql`${word}`, term, words.length > 1, filters, after, limit)}) ${sql.literal(`a${i}`)}`
      )
      return yield* summaries(
        sql`SELECT DISTINCT package_id, tier, name FROM (${sql.join(" UNION ALL ", false)(arms)}) u
          ORDER BY tier, name LIMIT ${limit}`
      )
    })

  /** SQLite: the weight of the best field holding a word that starts with `term`, for a package `p` that matched. */
  const termWeight = (term: string) => {
    const { from, to } = prefixRange(term)
    return sql`CASE (SELECT MIN(h.tier) FROM package_terms h
        WHERE h.package_id = p.id AND h.term >= ${from} AND h.term < ${to})
      WHEN 1 THEN 8 WHEN 2 THEN 4 WHEN 3 THEN 2 ELSE 1 END`
  }

  /**
   * Several words: the packages holding all of them (full-text index), scored, then sorted. The matches are
   * few (every word must be present), and the index intersects them before any row is read.
   */
  const severalWords = (terms: ReadonlyArray<string>, filters: Filters, after: Keyset | undefined, limit: number) => {
    const match = textMatch(terms)
    // PostgreSQL keeps ts_rank here: it reads the package's own tsvector only (no corpus statistics, so its
    // pages hold while packages arrive), and the tier sum measured slower for the few hundred rows two words match.
    const score = dialect === "pg"
      ? sql`ts_rank(p.search_vector, to_tsquery('simple', ${terms.map((term) => `${term}:*`).join(" & ")}))::float8`
      : sql.join(" + ", false)(terms.map(termWeight))
    const ranked = sql`SELECT p.id, p.name, ${score} AS score
      FROM packages p ${match.join} WHERE ${sql.and([...filters, match.where])}`
    const resume = after === undefined
      ? sql`1 = 1`
      : sql`(s.score < ${after.value} OR (s.score = ${after.value} AND s.name > ${nameOf(after.id)}))`
    return sql`SELECT ${sql.literal(summaryColumns)}, t.score
      FROM (SELECT * FROM (${ranked}) s WHERE ${resume} ORDER BY s.score DESC, s.name ASC LIMIT ${limit}) t
      JOIN packages p ON p.id = t.id LEFT JOIN publishers pub ON pub.id = p.publisher_id
      ORDER BY t.score DESC, t.name ASC`.values
  }

  /** A 3-letter word: one walk of the prefix table's key, in (tier, name) order, stopping at the page size. */
  const storedPrefix = (term: string, filters: Filters, after: Keyset | undefined, limit: number) =>
    flatWalk("package_prefixes", sql`t.prefix = ${term}`, filters, after, limit)

  /** The same walk on PostgreSQL, filtered by curation status only: `clark_prefix_page` (migration 0015). */
  const storedPrefixPgStatuses = (term: string, statuses: ReadonlyArray<string>, after: Keyset | undefined, limit: number) => {
    const { afterName, afterTier } = resumeArguments(after)
    return sql`SELECT * FROM clark_prefix_page(${term}, ${statuses.join(",")}, ${afterTier}, ${afterName}, ${limit})`.values
  }

  const oneWord = (
    term: string,
    statuses: ReadonlyArray<string> | undefined,
    filters: Filters,
    after: Keyset | undefined,
    limit: number
  ) =>
    options.prefixTable && isStoredPrefix(term)
      ? dialect === "pg" && statuses !== undefined
        ? storedPrefixPgStatuses(term, statuses, after, limit)
        : storedPrefix(term, filters, after, limit)
      : dialect === "sqlite"
      ? oneWordSqlite(term, filters, after, limit)
      : statuses === undefined
      ? oneWordPg(term, filters, after, limit)
      : oneWordPgStatuses(term, statuses, filters, after, limit)

  return {
    textMatch,
    oneWord,
    severalWords
  }
}
