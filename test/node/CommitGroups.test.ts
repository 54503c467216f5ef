/**
 * A commit group's own transaction (layers/node/sql/SqlTransactions.ts): its members' statements on its connection
 * (Direct.ts), its span with tracing on, the layer's closing rolling it back; and the column names remembered
 * (Names.ts). On a real SQLite file, with a second connection to see what is committed.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope, String, Tracer } from "effect"
import * as path from "node:path"
import { run as execute } from "../../layers/node/sql/Direct.js"
import * as Names from "../../layers/node/sql/Names.js"
import * as SqlTransactions from "../../layers/node/sql/SqlTransactions.js"
import { Transactions } from "../../services/node/Transactions.js"
import { Database, queryFile } from "../support/NodeFixtures.js"
import * as NodeServer from "../support/NodeServer.js"

/**
 * A database file with one table and a second connection that sees only commits. `names`: the client names columns
 * as the node's does; without, it leaves them as SQL has them, so rows that come back in camelCase were read by
 * Direct.run on the group's connection (its rows are named by Names.ts), not by the client's statement.
 */
const database = (names = true) => {
  const file = path.join(NodeServer.makeDataDir(), "units.db")
  const client = SqliteClient.layer({
    filename: file,
    transformQueryNames: Names.queryNames,
    ...(names ? { transformResultNames: Names.resultNames } : {})
  })
  const schema = Layer.effectDiscard(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE IF NOT EXISTS units (unit_name TEXT PRIMARY KEY, made_at INTEGER NOT NULL)`)))
  const layer = Layer.merge(SqlTransactions.layer, schema).pipe(Layer.provideMerge(client))
  const committed = () =>
    queryFile(file, "SELECT unit_name FROM units ORDER BY unit_name").map((row) => globalThis.String(row.unit_name))
  return { file, layer, committed }
}

/** `base` recording the names of the spans it makes. */
const recording = (base: Tracer.Tracer) => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, ...rest) => {
      names.push(name)
      return base.span(name, ...rest)
    },
    context: (f, fiber) => base.context(f, fiber)
  })
  return { names, tracer }
}

describe("column names", () => {
  it("are the client's snake_case and camelCase, remembered", () => {
    for (const name of ["created_at", "next_seq", "rev", "host_written", "a_b_c"]) {
      expect(Names.resultNames(name)).toBe(String.snakeToCamel(name))
      expect(Names.resultNames(name)).toBe(String.snakeToCamel(name))
    }
    for (const name of ["createdAt", "nextSeq", "rev", "hostWritten", "aBC"]) {
      expect(Names.queryNames(name)).toBe(String.camelToSnake(name))
    }
    // More names than it keeps: still right after it starts again.
    for (let i = 0; i < 3000; i++) expect(Names.resultNames(`column_${i}_x`)).toBe(`column${i}X`)
  })
})

describe("a commit group's members", () => {
  it.scoped("run their statements on the group's connection with tracing off, uncommitted until its COMMIT", () => {
    const { committed, layer } = database(false)
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const sql = yield* SqlClient.SqlClient
      const seen = yield* transactions.atomically(Effect.gen(function*() {
        yield* execute(sql`INSERT INTO units ${sql.insert({ unitName: "a", madeAt: 1 })}`)
        const rows = yield* execute(sql<{ unitName: string; madeAt: number }>`SELECT unit_name, made_at FROM units`)
        return { rows, committedThen: committed() }
      }).pipe(Effect.orDie))
      expect(seen.rows).toEqual([{ unitName: "a", madeAt: 1 }])
      expect(seen.committedThen).toEqual([])
      expect(committed()).toEqual(["a"])
      // Outside a unit, the client's own statement: its rows as SQL names them.
      expect(yield* Effect.orDie(execute(sql`SELECT unit_name FROM units`))).toEqual([{ unit_name: "a" }])
    }).pipe(Effect.provide(layer), Effect.withTracerEnabled(false))
  })

  it.scoped("with tracing on, a commit group is a sql.transaction span and its statements have theirs", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const { names, tracer } = recording(yield* Effect.tracer)
      yield* Effect.gen(function*() {
        const transactions = yield* Transactions
        const sql = yield* SqlClient.SqlClient
        yield* Effect.orDie(transactions.atomically(execute(sql`INSERT INTO units ${sql.insert({ unitName: "grouped", madeAt: 3 })}`)))
      }).pipe(Effect.provide(layer), Effect.withTracer(tracer), Effect.withTracerEnabled(true))
      expect(names).toContain("sql.transaction")
      expect(names).toContain("sql.execute")
      expect(committed()).toEqual(["grouped"])
    })
  })

  it.scoped("fail with the driver's SqlError when a statement is refused", () => {
    const { layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const sql = yield* SqlClient.SqlClient
      const exit = yield* Effect.exit(transactions.atomically(
        execute(sql`INSERT INTO units ${sql.insert({ unitName: "no time", madeAt: null })}`)
      ))
      expect(Exit.isFailure(exit) && Exit.causeOption(exit)._tag === "Some").toBe(true)
      expect(JSON.stringify(exit)).toContain("SqlError")
    }).pipe(Effect.withTracerEnabled(false), Effect.provide(layer))
  })
})

describe("a commit group when the layer closes", () => {
  it.effect("is rolled back: its members learn it and nothing of it is stored; later units are refused", () => {
    const { committed, file, layer } = database()
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(layer, scope)
      const transactions = Context.get(context, Transactions)
      const sql = Context.get(context, SqlClient.SqlClient)
      const inside = yield* Deferred.make<void>()
      const member = yield* Effect.fork(transactions.atomically(Effect.gen(function*() {
        yield* Effect.orDie(execute(sql`INSERT INTO units ${sql.insert({ unitName: "cut", madeAt: 1 })}`))
        yield* Deferred.succeed(inside, undefined)
        return yield* Effect.never
      })).pipe(Effect.withTracerEnabled(false)))
      yield* Deferred.await(inside)
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(member)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(committed()).toEqual([])
      const db = new Database(file)
      try {
        db.prepare("INSERT INTO units (unit_name, made_at) VALUES ('after', 2)").run()
      } finally {
        db.close()
      }
      expect(committed()).toEqual(["after"])
      // A unit that arrives after the close is refused as interrupted, not left waiting for a group that never runs.
      const late = yield* Effect.exit(transactions.atomically(Effect.void))
      expect(Exit.isInterrupted(late)).toBe(true)
    })
  })
})
