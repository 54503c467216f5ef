/**
 * Statements in a unit without the client's span (layers/node/sql/Direct.ts): inside a transaction they run on its
 * connection, with the client's name transforms; outside one, and with tracing on, they are the client's own
 * statements (its permit, its span). On a real SQLite file, a second connection reading only what is committed.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Data, Deferred, Effect, Fiber, Layer, Option, String, Tracer } from "effect"
import * as path from "node:path"
import * as Direct from "../../layers/node/sql/Direct.js"
import * as NodeServer from "../support/NodeServer.js"
import { queryFile } from "../support/NodeFixtures.js"

class Refused extends Data.TaggedError("Refused") {}

/** A database file with one table, on a client configured as the node's (NodeDatabase.ts). */
const database = () => {
  const file = path.join(NodeServer.makeDataDir(), "direct.db")
  const client = SqliteClient.layer({ filename: file, transformResultNames: Direct.resultNames, transformQueryNames: String.camelToSnake })
  const schema = Layer.effectDiscard(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE IF NOT EXISTS units (unit_name TEXT PRIMARY KEY, unit_size INTEGER)`)))
  const committed = () =>
    queryFile(file, "SELECT unit_name FROM units ORDER BY unit_name").map((row) => globalThis.String(row.unit_name))
  return { layer: Layer.provideMerge(schema, client), committed }
}

const insert = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.orDie(Direct.run(sql`INSERT INTO units ${sql.insert({ unitName: name, unitSize: name.length })}`)))

/** As the node runs them with tracing off (its default, CLARK_TRACING). */
const untraced = Effect.withTracerEnabled(false)

describe("statements without their span", () => {
  it.scoped("compile names and transform rows as the client does", () => {
    const { layer } = database()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql.withTransaction(
        Effect.zipRight(insert("alpha"), Direct.run(sql`SELECT unit_name, unit_size FROM units`))
      )
      expect(rows).toEqual([{ unitName: "alpha", unitSize: 5 }])
    }).pipe(untraced, Effect.provide(layer))
  })

  it.scoped("join the open transaction: undone with it, committed with it", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const undone = yield* Effect.either(sql.withTransaction(Effect.zipRight(insert("undone"), new Refused())))
      expect(undone._tag).toBe("Left")
      yield* sql.withTransaction(insert("kept"))
      expect(committed()).toEqual(["kept"])
    }).pipe(untraced, Effect.provide(layer))
  })

  it.scoped("outside a transaction, wait while another fiber's transaction is open instead of joining it", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const open = yield* Effect.fork(Effect.either(sql.withTransaction(Effect.gen(function*() {
        yield* insert("theirs")
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
        return yield* new Refused()
      }))))
      yield* Deferred.await(inside)
      const mine = yield* Effect.fork(insert("mine"))
      // The other transaction is still open: the statement has not run (it would have joined it).
      for (let turn = 0; turn < 10; turn++) yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(mine))).toBe(true)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(open)
      yield* Fiber.join(mine)
      // The other transaction rolled back; this statement was not part of it.
      expect(committed()).toEqual(["mine"])
    }).pipe(untraced, Effect.provide(layer))
  })

  it.scoped("with tracing on, are the client's statements with their span; off, make none", () => {
    const { layer } = database()
    const names: Array<string> = []
    return Effect.gen(function*() {
      const base = yield* Effect.tracer
      const recording = Tracer.make({
        span: (name, ...rest) => {
          names.push(name)
          return base.span(name, ...rest)
        },
        context: (f, fiber) => base.context(f, fiber)
      })
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(insert("off")).pipe(Effect.withTracer(recording), untraced)
      expect(names).toEqual([])
      yield* sql.withTransaction(insert("on")).pipe(Effect.withTracer(recording), Effect.withTracerEnabled(true))
      expect(names).toEqual(["sql.transaction", "sql.execute"])
    }).pipe(Effect.provide(layer))
  })
})
