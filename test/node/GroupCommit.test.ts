/**
 * Group commit of the node's units of work (layers/node/sql/SqlTransactions.ts): units that arrive while a group
 * runs join its transaction, each after the first in its own savepoint, and nobody is answered before the COMMIT. Checked on a real
 * SQLite file, with a second connection to see what is committed; then through the real node: a burst of turn
 * starts all stored, and a crash right after the acknowledgements loses none of them.
 */
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as path from "node:path"
import * as SqlTransactions from "../../layers/node/sql/SqlTransactions.js"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import { Transactions } from "../../services/node/Transactions.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { conversation, Database, doneOf, query, textOf, timeline } from "../support/NodeFixtures.js"
import { exited, spawnNode } from "../support/NodeProcess.js"

class Refused extends Data.TaggedError("Refused")<{ readonly name: string }> {}

/** A database file with one table, the transactions layer on it, and a second connection that sees only commits. */
const database = () => {
  const file = path.join(NodeServer.makeDataDir(), "units.db")
  const client = SqliteClient.layer({ filename: file })
  const schema = Layer.effectDiscard(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`CREATE TABLE IF NOT EXISTS units (name TEXT PRIMARY KEY)`)))
  const layer = Layer.merge(SqlTransactions.layer, schema).pipe(Layer.provideMerge(client))
  const committed = () => {
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare("SELECT name FROM units ORDER BY name").all().map((row) => String(row.name))
    } finally {
      db.close()
    }
  }
  return { layer, committed }
}

const insert = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.orDie(sql`INSERT INTO units (name) VALUES (${name})`))

describe("group commit", () => {
  it.scoped("units that arrive while a group runs join its transaction; each is answered only after its COMMIT", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(transactions.atomically(Effect.gen(function*() {
        yield* insert("a")
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
        return "first"
      })))
      yield* Deferred.await(inside)
      // While the first unit holds its group open, three more arrive. Each runs after it, in the same transaction:
      // the first unit's row is not committed yet when they run.
      const seenByLater: Array<ReadonlyArray<string>> = []
      const later = yield* Effect.forEach(["b", "c", "d"], (name) =>
        Effect.fork(transactions.atomically(Effect.gen(function*() {
          yield* insert(name)
          seenByLater.push(committed())
          return name
        }))))
      expect(committed()).toEqual([])
      yield* Deferred.succeed(release, undefined)
      const answers = yield* Effect.forEach([first, ...later], (fiber) =>
        Effect.map(Fiber.join(fiber), (answer) => ({ answer, visible: committed() })))
      expect(seenByLater).toEqual([[], [], []])
      expect(answers.map((a) => a.answer)).toEqual(["first", "b", "c", "d"])
      // Every answer came after the COMMIT: a second connection already sees all four rows.
      for (const a of answers) expect(a.visible).toEqual(["a", "b", "c", "d"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a unit that fails or dies undoes only its own writes; the others of its group are stored", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(transactions.atomically(Effect.gen(function*() {
        yield* insert("a")
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(inside)
      const failing = yield* Effect.fork(transactions.atomically(
        Effect.zipRight(insert("b"), Effect.fail(new Refused({ name: "b" })))
      ))
      const dying = yield* Effect.fork(transactions.atomically(Effect.zipRight(insert("c"), Effect.dieMessage("boom"))))
      const fine = yield* Effect.fork(transactions.atomically(Effect.as(insert("d"), "d")))
      // A unit whose statement fails on the database (a duplicate key): a defect, undone alone.
      const duplicate = yield* Effect.fork(transactions.atomically(Effect.zipRight(insert("e"), insert("a"))))
      yield* Deferred.succeed(release, undefined)

      expect(Exit.isSuccess(yield* Fiber.await(holder))).toBe(true)
      const failed = yield* Fiber.await(failing)
      expect(Exit.isFailure(failed) ? Cause.failureOption(failed.cause) : Option.none()).toEqual(Option.some(new Refused({ name: "b" })))
      const died = yield* Fiber.await(dying)
      expect(Exit.isFailure(died) && Cause.isDie(died.cause)).toBe(true)
      expect(yield* Fiber.join(fine)).toBe("d")
      const clashed = yield* Fiber.await(duplicate)
      expect(Exit.isFailure(clashed) && Cause.isDie(clashed.cause)).toBe(true)
      expect(committed()).toEqual(["a", "d"])

      // The connection is left clean: the next group commits on its own.
      yield* transactions.atomically(insert("f"))
      expect(committed()).toEqual(["a", "d", "f"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped("the first unit of a group, which runs without a savepoint, undoes only its own writes when it fails or dies", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(transactions.atomically(Effect.gen(function*() {
        yield* insert("a")
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
        return yield* new Refused({ name: "a" })
      })))
      yield* Deferred.await(inside)
      // Two units join the group while its first one runs; they run after it, in the same group.
      const later = yield* Effect.forEach(["b", "c"], (name) => Effect.fork(transactions.atomically(Effect.as(insert(name), name))))
      yield* Deferred.succeed(release, undefined)
      const failed = yield* Fiber.await(first)
      expect(Exit.isFailure(failed) ? Cause.failureOption(failed.cause) : Option.none()).toEqual(Option.some(new Refused({ name: "a" })))
      expect(yield* Effect.forEach(later, Fiber.join)).toEqual(["b", "c"])
      expect(committed()).toEqual(["b", "c"])

      // A group of one whose statement fails on the database (a duplicate key) dies, leaving nothing of it.
      const clash = yield* Effect.exit(transactions.atomically(Effect.zipRight(insert("d"), insert("b"))))
      expect(Exit.isFailure(clash) && Cause.isDie(clash.cause)).toBe(true)
      expect(committed()).toEqual(["b", "c"])
      // The connection is left clean: the next group commits on its own.
      yield* transactions.atomically(insert("e"))
      expect(committed()).toEqual(["b", "c", "e"])
    }).pipe(Effect.provide(layer))
  })

  it.scoped(`a group takes at most ${SqlTransactions.maxGroup} units; the next one commits in a group of its own`, () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const inside = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(transactions.atomically(Effect.gen(function*() {
        yield* insert("0")
        yield* Deferred.succeed(inside, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(inside)
      const names = Array.from({ length: SqlTransactions.maxGroup }, (_, i) => String(i + 1).padStart(3, "0"))
      const seen = new Map<string, number>()
      const rest = yield* Effect.forEach(names, (name) =>
        Effect.fork(transactions.atomically(Effect.zipRight(insert(name), Effect.sync(() => seen.set(name, committed().length))))))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Effect.forEach(rest, Fiber.join)
      // The first group (the holder and 127 more) was committed before the last unit ran in the next one.
      const last = names.at(-1)!
      expect(seen.get(last)).toBe(SqlTransactions.maxGroup)
      expect(names.slice(0, -1).every((name) => seen.get(name) === 0)).toBe(true)
      expect(committed()).toHaveLength(SqlTransactions.maxGroup + 1)
    }).pipe(Effect.provide(layer))
  })

  it.scoped("a unit inside a transaction already open is a savepoint of that one, not a group of its own", () => {
    const { committed, layer } = database()
    return Effect.gen(function*() {
      const transactions = yield* Transactions
      const sql = yield* SqlClient.SqlClient
      const outcome = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* insert("outer")
        const inner = yield* Effect.exit(transactions.atomically(Effect.zipRight(insert("inner"), Effect.fail(new Refused({ name: "inner" })))))
        expect(Exit.isFailure(inner)).toBe(true)
        expect(committed()).toEqual([])
      })))
      expect(Exit.isSuccess(outcome)).toBe(true)
      expect(committed()).toEqual(["outer"])
    }).pipe(Effect.provide(layer))
  })
})

const script: ScriptInput = { rules: [] }

describe("a burst of turn starts", () => {
  it.scoped("24 streams started at once: every turn is answered and stored with its audit entry", () =>
    Effect.gen(function*() {
      const node = yield* TestNode
      const ids = yield* Effect.forEach(Array.from({ length: 24 }), () => conversation)
      const streams = yield* Effect.forEach(ids, (id, i) =>
        node.stream(`/conversations/${id}/messages/stream`, { text: `burst ${i}` }), { concurrency: "unbounded" })
      const ended = yield* Effect.forEach(streams, (s) => s.ended, { concurrency: "unbounded" })
      for (const [i, events] of ended.entries()) {
        expect(events.at(-1)!.event).toBe("done")
        expect(events.slice(0, -1).every((e) => e.event === "delta")).toBe(true)
        expect(doneOf(events)).toMatchObject({ resolution: "answered" })
        const entries = yield* timeline(ids[i]!)
        expect(entries.map((e) => [e.role, e.status])).toEqual([["user", "complete"], ["assistant", "complete"]])
        expect(textOf(entries[1])).toBe(`You said: burst ${i}`)
      }
      const audited = query(node.dataDir, "SELECT conversation_id FROM audit_log WHERE kind = 'message'")
      expect(audited.map((row) => row.conversation_id).sort()).toEqual([...ids].sort())
    }).pipe(Effect.provide(NodeServer.layer({ script }))))

  it.scoped("a start for a conversation that does not exist is 404 and leaves the others of its burst stored", () =>
    Effect.gen(function*() {
      const node = yield* TestNode
      const ids = yield* Effect.forEach(Array.from({ length: 10 }), () => conversation)
      const all = [...ids.slice(0, 5), "conv_missing", ...ids.slice(5)]
      const answers = yield* Effect.forEach(all, (id) =>
        node.request("POST", `/conversations/${id}/messages`, { body: { text: "hello" } }), { concurrency: "unbounded" })
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 404, 200, 200, 200, 200, 200])
      expect(answers[5]!.body.code).toBe("RESOURCE_NOT_FOUND")
      for (const id of ids) expect(yield* timeline(id)).toHaveLength(2)
      expect(query(node.dataDir, "SELECT id FROM messages WHERE conversation_id = 'conv_missing'")).toEqual([])
    }).pipe(Effect.provide(NodeServer.layer({ script }))))
})

describe("a crash right after a burst of starts", () => {
  it.scoped("SIGKILL once every stream's head has arrived: every acknowledged start is in the database", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const { baseUrl, child, token } = yield* spawnNode({
        dataDir,
        script: { rules: [{ match: "^forever", steps: [{ delay: 3_600_000 }] }] },
        compiled: true
      })
      // The command-line api's headers: the token alone.
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      const ids = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: 30 }, () =>
          fetch(`${baseUrl}/conversations`, { method: "POST", headers, body: "{}" })
            .then((r) => r.json() as Promise<{ conversationId: string }>)
            .then((body) => body.conversationId)))
      )
      // All at once; each counts as acknowledged when its response head has arrived (its turn is running).
      const controller = new AbortController()
      const heads = yield* Effect.promise(() =>
        Promise.all(ids.map((id) =>
          fetch(`${baseUrl}/conversations/${id}/messages/stream`, {
            method: "POST",
            headers,
            body: JSON.stringify({ text: "forever" }),
            signal: controller.signal
          }).then((r) => r.status)))
      )
      expect(heads).toEqual(ids.map(() => 200))
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited(child))
      controller.abort()
      expect(child.signalCode).toBe("SIGKILL")

      const db = new Database(path.join(dataDir, "node.db"), { readonly: true })
      try {
        const rows = db.prepare("SELECT conversation_id, role FROM messages ORDER BY conversation_id, seq").all()
        expect(rows).toHaveLength(ids.length * 2)
        for (const id of ids) {
          expect(rows.filter((row) => row.conversation_id === id).map((row) => row.role)).toEqual(["user", "assistant"])
        }
        const audited = db.prepare("SELECT count(*) AS n FROM audit_log WHERE kind = 'message'").all()
        expect(audited[0].n).toBe(ids.length)
      } finally {
        db.close()
      }
    }), { timeout: 120_000 })
})
