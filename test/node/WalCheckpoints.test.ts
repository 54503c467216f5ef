/**
 * The node database's WAL checkpoints on a worker thread (layers/node/sql/WalCheckpoints.ts): on a real SQLite file
 * in WAL mode, the worker copies every committed page back into the database while the main connection stops
 * checkpointing inside its commits; a node that wrote little starts no worker; a worker that cannot checkpoint
 * leaves the main connection checkpointing by itself.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as WalCheckpoints from "../../layers/node/sql/WalCheckpoints.js"
import * as NodeServer from "../support/NodeServer.js"

const database = () => {
  const file = path.join(NodeServer.makeDataDir(), "node.db")
  return { file, layer: SqliteClient.layer({ filename: file }) }
}

/** `count` committed rows of 2 KiB each, one commit each: every commit appends its pages to the WAL. */
const write = (count: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT)`
      for (let i = 0; i < count; i++) yield* sql`INSERT INTO rows (body) VALUES (${"x".repeat(2048)})`
    }).pipe(Effect.orDie))

const autocheckpoint = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(Effect.orDie(sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`), (rows) => rows[0]!.wal_autocheckpoint))

describe("WAL checkpoints on a worker", () => {
  it.scoped("the worker copies every committed page into the database; the main connection leaves it the work", () => {
    const { file, layer } = database()
    return Effect.gen(function*() {
      yield* write(200)
      expect(yield* autocheckpoint).toBe(1000)
      const checkpoints = yield* WalCheckpoints.make({ filename: file, startAtBytes: 0 })
      const done = yield* checkpoints.checkpoint
      expect(done.walPages).toBeGreaterThan(0)
      expect(done.checkpointed).toBe(done.walPages)
      expect(done.busy).toBe(0)
      // From its first answer on, commits on the main connection no longer checkpoint inside the commit.
      expect(yield* autocheckpoint).toBe(0)
      // What the worker copied is in the database file: a fresh reader without the WAL sees every row.
      yield* write(10)
      const again = yield* checkpoints.checkpoint
      expect(again.checkpointed).toBe(again.walPages)
      const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.orDie(sql<{ n: number }>`SELECT count(*) AS n FROM rows`))
      expect(rows[0]!.n).toBe(210)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a node that wrote little starts no worker; once the WAL passes the bound a tick starts it and checkpoints", () => {
    const { file, layer } = database()
    return Effect.gen(function*() {
      yield* write(1)
      const checkpoints = yield* WalCheckpoints.make({ filename: file, startAtBytes: 256 * 1024 })
      expect(yield* checkpoints.tick).toEqual(Option.none())
      expect(yield* checkpoints.started).toBe(false)
      expect(yield* autocheckpoint).toBe(1000)
      yield* write(200)
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(256 * 1024)
      const ticked = yield* checkpoints.tick
      expect(Option.isSome(ticked)).toBe(true)
      expect(yield* checkpoints.started).toBe(true)
      expect(yield* autocheckpoint).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a worker that cannot checkpoint fails its checkpoint and the main connection keeps checkpointing", () => {
    const { file, layer } = database()
    return Effect.gen(function*() {
      yield* write(10)
      // The worker opens only an existing file: a name that is not one makes it fail at start.
      const checkpoints = yield* WalCheckpoints.make({ filename: `${file}.missing`, startAtBytes: 0 })
      const failed = yield* Effect.either(checkpoints.checkpoint)
      expect(Either.isLeft(failed)).toBe(true)
      expect(yield* autocheckpoint).toBe(1000)
    }).pipe(Effect.provide(layer))
  })
})
