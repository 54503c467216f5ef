/**
 * The prefix table: one row per package and distinct 3-code-point start of its words, at the best tier of the
 * words starting so, keyed (prefix, tier, name) like the search table. A 3-letter query walks one key in order
 * and stops at the page size; through `package_terms` it walked every word with that start (up to 48) and
 * checked each row against the package's better words, which kept PostgreSQL's p99 above 100 ms at 100,000
 * packages (docs/decisions.md, "A prefix table for 3-letter searches").
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ref = sql.onDialectOrElse({ pg: () => sql.literal("BIGINT"), orElse: () => sql.literal("INTEGER") })
  // Packages already stored get their rows from their search rows. Both dialects count characters (code points)
  // in left/substr and length, as SearchTerms.ts `prefixesOfPackage` does.
  yield* sql.onDialectOrElse({
    // Byte order, as package names and terms are ordered everywhere else. The key is added after the backfill:
    // maintained row by row, a million-package catalogue's 16 million rows took over 15 minutes to insert.
    pg: () =>
      Effect.all([
        sql`CREATE TABLE package_prefixes (
          prefix TEXT COLLATE "C" NOT NULL,
          tier SMALLINT NOT NULL,
          name TEXT COLLATE "C" NOT NULL,
          package_id ${ref} NOT NULL REFERENCES packages (id) ON DELETE CASCADE
        )`,
        sql`INSERT INTO package_prefixes (prefix, tier, name, package_id)
          SELECT left(term, 3), MIN(tier), name, package_id FROM package_terms WHERE char_length(term) >= 3
          GROUP BY left(term, 3), name, package_id`,
        // The package id rides in the key's index, so a walk never visits the table.
        sql`ALTER TABLE package_prefixes ADD PRIMARY KEY (prefix, tier, name) INCLUDE (package_id)`
      ], { discard: true }),
    // WITHOUT ROWID: the rows live in the key's b-tree; the backfill arrives in key order.
    orElse: () =>
      Effect.all([
        sql`CREATE TABLE package_prefixes (
          prefix TEXT NOT NULL,
          tier INTEGER NOT NULL,
          name TEXT NOT NULL,
          package_id ${ref} NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
          PRIMARY KEY (prefix, tier, name)
        ) WITHOUT ROWID`,
        sql`INSERT INTO package_prefixes (prefix, tier, name, package_id)
          SELECT substr(term, 1, 3), MIN(tier), name, package_id FROM package_terms WHERE length(term) >= 3
          GROUP BY substr(term, 1, 3), name, package_id ORDER BY 1, 2, 3`
      ], { discard: true })
  })
  // A package's own rows, replaced on import.
  yield* sql`CREATE INDEX package_prefixes_package ON package_prefixes (package_id)`
})
