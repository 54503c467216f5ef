/**
 * The catalogue-version bump (0004) can be deferred to the end of a transaction. The bump runs per write
 * statement, so a transaction that writes a package holds the one `catalog_version` row from its first write to
 * its commit: every indexer worker of every replica then writes one at a time. A transaction that sets
 * `clark.catalog_bump = 'deferred'` (transaction-local) skips the per-statement bumps and bumps once itself as its
 * last statement, so it holds the row only for that statement and the commit. Everything else still bumps per
 * statement. SQLite has no such row (see 0004).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      sql`CREATE OR REPLACE FUNCTION clark_bump_catalog_version() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF current_setting('clark.catalog_bump', true) = 'deferred' THEN RETURN NULL; END IF;
          UPDATE catalog_version SET version = version + 1 WHERE id = 1;
          RETURN NULL;
        END $$`,
    orElse: () => Effect.void
  })
})
