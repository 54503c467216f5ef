/**
 * Rate-limit counters shared by replicas (layers/marketplace/sql/SqlRateLimits.ts).
 * On PostgreSQL the tables are UNLOGGED: a counter is worth less than the WAL
 * write it would cost on every request, and a crash only hands every client a
 * fresh budget. SQLite gets the same tables (the store runs there in tests;
 * the server on SQLite counts in memory).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const unlogged = sql.onDialectOrElse({ pg: () => sql.literal("UNLOGGED"), orElse: () => sql.literal("") })
  // Times are epoch milliseconds (fractions kept: a refill step is the window over the limit).
  yield* sql`CREATE ${unlogged} TABLE rate_limit_counters (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    refused BOOLEAN NOT NULL
  )`
  yield* sql`CREATE INDEX rate_limit_counters_expires_at ON rate_limit_counters (expires_at)`
  yield* sql`CREATE ${unlogged} TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY,
    tokens INTEGER NOT NULL,
    last_refill DOUBLE PRECISION NOT NULL,
    full_at DOUBLE PRECISION NOT NULL,
    refused BOOLEAN NOT NULL
  )`
  yield* sql`CREATE INDEX rate_limit_buckets_full_at ON rate_limit_buckets (full_at)`
})
