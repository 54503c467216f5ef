/**
 * Packages: local folders the person listed, installed packages, install approvals and the
 * `package.install-approval` event stream.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE local_packages (
    package_id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    added_at TEXT NOT NULL
  )`

  // One row per package: installing another version or digest replaces it. `manifest` is the checked
  // manifest of the cache copy, as JSON.
  yield* sql`CREATE TABLE installed_packages (
    package_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    content_digest TEXT NOT NULL,
    cache_path TEXT NOT NULL,
    manifest TEXT NOT NULL,
    installed_at TEXT NOT NULL
  )`

  yield* sql`CREATE TABLE install_approvals (
    id TEXT PRIMARY KEY,
    package_id TEXT NOT NULL,
    source TEXT NOT NULL,
    version TEXT NOT NULL,
    digest TEXT NOT NULL,
    content_digest TEXT NOT NULL,
    operation_digest TEXT NOT NULL,
    asks_for TEXT NOT NULL,
    risk_tier TEXT NOT NULL,
    status TEXT NOT NULL,
    asked_by TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    decided_at TEXT
  )`
  yield* sql`CREATE INDEX install_approvals_waiting ON install_approvals (status, package_id, version)`

  yield* sql`CREATE TABLE install_approval_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id TEXT NOT NULL,
    package_id TEXT NOT NULL,
    version TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT,
    at TEXT NOT NULL
  )`
})
