/** The node's own tables (SQLite under the data dir). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    home_node_id TEXT NOT NULL,
    title TEXT,
    rev INTEGER NOT NULL DEFAULT 0,
    next_seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`

  // Timeline entries. `seq` orders them; `rev` grows on every insert or change so
  // `?after=N` returns what changed since N.
  yield* sql`CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    seq INTEGER NOT NULL,
    rev INTEGER NOT NULL,
    role TEXT NOT NULL,
    origin TEXT,
    channel TEXT,
    status TEXT NOT NULL,
    note TEXT,
    host_written TEXT,
    task_id TEXT,
    blocks TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX messages_by_seq ON messages (conversation_id, seq)`
  yield* sql`CREATE INDEX messages_by_rev ON messages (conversation_id, rev)`
  yield* sql`CREATE INDEX messages_by_status ON messages (status)`

  // Every event of a turn as streamed, so a client can resume with Last-Event-ID.
  yield* sql`CREATE TABLE turn_events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  )`

  yield* sql`CREATE TABLE client_requests (
    conversation_id TEXT NOT NULL,
    client_request_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    task_id TEXT,
    PRIMARY KEY (conversation_id, client_request_id)
  )`

  yield* sql`CREATE TABLE questions (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id),
    message_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    asked_again_as TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX questions_open ON questions (status, expires_at)`

  yield* sql`CREATE TABLE host_controls (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    say TEXT,
    created_at TEXT NOT NULL,
    answered_at TEXT
  )`

  yield* sql`CREATE TABLE notices (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    conversation_id TEXT,
    subject_id TEXT,
    data TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`

  yield* sql`CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    conversation_id TEXT,
    surface TEXT,
    channel TEXT,
    detail TEXT NOT NULL
  )`
  yield* sql`CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`
  yield* sql`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`
})
