/**
 * bench:widgets' other references: a widget press in the shape the issue requires, written plainly, with none of
 * the node's rules and none of its tuning, so that what the shape itself costs is measured in the same run as the
 * node's press. Two modes:
 *
 * `press`: per press, what the node does at the least:
 * - an HttpApi endpoint (POST /press, its payload decoded by Schema) on `NodeHttpServer`, tracing off;
 * - ledger first: the call recorded in a SQLite file of its own (WAL, `synchronous = FULL`, as ledger.sqlite) before
 *   it is sent, and its answer recorded after;
 * - the invocation id claimed in the main database (WAL, `synchronous = NORMAL`, as node.db) before the call, so it is
 *   never sent twice; after the call, the stored answer and an audit row committed in one transaction, then the
 *   answer given;
 * - the tool call through the MCP SDK's `Client` over stdio to the probe process (the package's server.mjs), the
 *   transport the node's package runtime uses.
 * Left out: the bearer and app-secret checks, the instance, revision and binding checks, rate limits, policy, the
 * timeline entry and every other rule.
 *
 * `platform`: the endpoint and the tool call alone, nothing stored: the least any server of this shape does.
 *
 * bench:widgets bundles it (esbuild, one file, better-sqlite3 outside) and runs it with `clark`'s V8 setting:
 *
 *   node --no-allocation-site-pretenuring dist/bench/plain-press.mjs <press|platform> <port> <dir> <package folder>
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Context, Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import * as path from "node:path"

const [mode, port, dir, folder] = process.argv.slice(2)
if (mode !== "press" && mode !== "platform") throw new Error(`the mode must be press or platform, got ${mode}`)

class Presses extends HttpApiGroup.make("presses")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ status: Schema.String })))
  .add(
    HttpApiEndpoint.post("press", "/press")
      .setPayload(Schema.Struct({ invocationId: Schema.String, input: Schema.Struct({ key: Schema.String }) }))
      .addSuccess(Schema.Struct({ outcome: Schema.Literal("done"), result: Schema.Unknown }))
  )
{}

class PlainApi extends HttpApi.make("plain").add(Presses) {}

/** The ledger's own database, beside the main one. */
class Ledger extends Context.Tag("Ledger")<Ledger, SqlClient.SqlClient>() {}

/** The probe process over stdio, closed with the server. */
class Probe extends Context.Tag("Probe")<Probe, Client>() {}

const ProbeLive = Layer.scoped(
  Probe,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "plain-press", version: "1.0.0" }, { capabilities: {} })
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(folder!, "server.mjs")], cwd: folder! }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )
)

const PressesLive = HttpApiBuilder.group(PlainApi, "presses", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const probe = yield* Probe
    const call = (input: { readonly key: string }) =>
      Effect.promise(() => probe.callTool({ name: "read_value", arguments: input }))
    const press = (invocationId: string, input: { readonly key: string }) =>
      Effect.gen(function*() {
        const now = Date.now()
        yield* ledger`INSERT INTO calls (invocation_id, tool, input, at) VALUES (${invocationId}, 'read_value', ${JSON.stringify(input)}, ${now})`
        yield* sql`INSERT INTO presses (invocation_id, status, at) VALUES (${invocationId}, 'running', ${now})`
        const result = yield* call(input)
        const answer = JSON.stringify(result)
        yield* sql.withTransaction(Effect.zipRight(
          sql`UPDATE presses SET status = 'done', answer = ${answer} WHERE invocation_id = ${invocationId}`,
          sql`INSERT INTO audit (at, kind, detail) VALUES (${Date.now()}, 'widget.press', ${invocationId})`
        ))
        yield* ledger`UPDATE calls SET answer = ${answer} WHERE invocation_id = ${invocationId}`
        return { outcome: "done" as const, result }
      })
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" }))
      .handle("press", ({ payload }) =>
        (mode === "platform"
          ? Effect.map(call(payload.input), (result) => ({ outcome: "done" as const, result }))
          : press(payload.invocationId, payload.input)).pipe(Effect.orDie))
  }))

const MainDatabase = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`PRAGMA synchronous = NORMAL`
  yield* sql`CREATE TABLE presses (invocation_id TEXT PRIMARY KEY, status TEXT NOT NULL, answer TEXT, at INTEGER NOT NULL)`
  yield* sql`CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL,
    detail TEXT NOT NULL)`
})).pipe(Layer.provideMerge(SqliteClient.layer({ filename: path.join(dir!, "node.sqlite") })))

const LedgerDatabase = Layer.scoped(
  Ledger,
  Effect.gen(function*() {
    const sql = yield* SqliteClient.make({ filename: path.join(dir!, "ledger.sqlite") })
    yield* sql`PRAGMA synchronous = FULL`
    yield* sql`CREATE TABLE calls (invocation_id TEXT PRIMARY KEY, tool TEXT NOT NULL, input TEXT NOT NULL,
      answer TEXT, at INTEGER NOT NULL)`
    return sql
  })
).pipe(Layer.provide(Reactivity.layer))

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(PlainApi).pipe(Layer.provide(PressesLive))),
  // Listening only once the probe has answered its handshake: a request before the app is served would hang.
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(port) })),
  Layer.provide(Layer.mergeAll(MainDatabase, LedgerDatabase, ProbeLive)),
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.launch,
  NodeRuntime.runMain
)
