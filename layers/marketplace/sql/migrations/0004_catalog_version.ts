/**
 * A counter that moves whenever catalogue data changes, so cached public reads
 * can tell they are stale. PostgreSQL bumps it with statement-level triggers
 * (one bump per statement, whoever writes: this server, another replica, the
 * admin CLI). SQLite needs no table: the connection's `total_changes()` and
 * the file's `data_version` already say whether anything was written.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Tables whose rows appear in package reads. */
const catalogTables = ["packages", "publishers", "categories", "package_versions", "package_facets", "package_platforms"]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        yield* sql`CREATE TABLE catalog_version (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          version BIGINT NOT NULL
        )`
        yield* sql`INSERT INTO catalog_version (id, version) VALUES (1, 0)`
        yield* sql`CREATE FUNCTION clark_bump_catalog_version() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN UPDATE catalog_version SET version = version + 1 WHERE id = 1; RETURN NULL; END $$`
        for (const table of catalogTables) {
          yield* sql`CREATE TRIGGER ${sql.literal(`${table}_catalog_version`)}
            AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.literal(table)}
            FOR EACH STATEMENT EXECUTE FUNCTION clark_bump_catalog_version()`
        }
      }),
    orElse: () => Effect.void
  })
})
