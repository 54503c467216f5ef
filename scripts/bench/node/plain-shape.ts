/**
 * The burst's other references: a streamed message in the shape the issue requires, written plainly, with none of
 * the node's rules and none of its tuning. bench:node runs it beside the node and plain node:http, so that what the
 * shape itself costs is measured in the same run as the node's figure. Two modes:
 *
 * `turn`: per message, what the node does at the least:
 * - an HttpApi endpoint (POST /conversations/:id/messages/stream, its payload decoded by Schema) on `NodeHttpServer`,
 *   tracing off as the node runs by default;
 * - the message and the reply's rows stored in one SQLite transaction (`@effect/sql-sqlite-node`, WAL,
 *   `synchronous = NORMAL`, as node.db) before anything is answered;
 * - the turn on a fiber of its own, outside the request's scope (a client that leaves does not end it); the model
 *   an Effect Stream (the bench's burst script: stamped deltas, the later ones `BENCH_DELAY_MS` apart), each delta
 *   published to the turn's `PubSub`; at the end the reply's text, its status and the `done` event stored in one
 *   transaction, then `done` published;
 * - the response `HttpServerResponse.stream` of the follower: a Stream of the turn's PubSub (subscribed before the
 *   turn starts, so it misses nothing), SSE-encoded, with the node's opening comment.
 *
 * Left out: the bearer check, audit rows, the conversation's history read, steering, deadlines, pacing, stop,
 * resume and every other rule. POST /conversations (the driver's set-up) stores a conversation; GET /health answers.
 *
 * `platform`: the endpoint and the streamed response alone, the least any server of this shape does: the response
 * is the model's Stream itself, SSE-encoded, with nothing stored, no turn fiber and no PubSub (a client that leaves
 * ends its turn: not what the spec allows, so a floor under the node, not a way to build it).
 *
 * bench:node bundles it as `npm run build` bundles the node (esbuild, one file, better-sqlite3 outside) and runs it with
 * `clark`'s V8 setting (`--no-allocation-site-pretenuring`, bin/v8-tuning.js):
 *
 *   node --no-allocation-site-pretenuring dist/bench/plain-shape.mjs <turn|platform> <deltas> <burst deltas> <delay ms> <port> <dir>
 *
 * A message whose text starts with "burst" gets the burst's number of deltas, any other the streams' (the warm-up).
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, PubSub, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import * as path from "node:path"

const [mode, deltas, burstDeltas, delayMs, port, dir] = process.argv.slice(2)
if (mode !== "turn" && mode !== "platform") throw new Error(`the mode must be turn or platform, got ${mode}`)
const delay = Number(delayMs)

const Conversation = Schema.Struct({ conversationId: Schema.String })
const Created = HttpApiEndpoint.post("create", "/conversations")
  .setPayload(Schema.Struct({ title: Schema.optional(Schema.String) }))
  .addSuccess(Conversation, { status: 201 })

class Turns extends HttpApiGroup.make("turns")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ status: Schema.String })))
  .add(Created)
  .add(
    HttpApiEndpoint.post("stream", "/conversations/:id/messages/stream")
      .setPath(Schema.Struct({ id: Schema.String }))
      .setPayload(Schema.Struct({ text: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
  )
{}

class PlainApi extends HttpApi.make("plain").add(Turns) {}

interface TurnEvent {
  readonly seq: number
  readonly event: "delta" | "done"
  readonly data: unknown
}

/** The bench script's model: stamped deltas, the first at once. */
const model = (text: string) => Stream.range(1, Number(text.startsWith("burst") ? burstDeltas : deltas)).pipe(
  Stream.mapEffect((i) => (i === 1 ? Effect.void : Effect.sleep(delay)).pipe(Effect.map(() => String(process.hrtime.bigint()))))
)

const encoder = new TextEncoder()
const sse = (taskId: string, e: TurnEvent) =>
  encoder.encode(`id: ${taskId}:${e.seq}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`)
const opening = Stream.make(encoder.encode(": connected\n\n"))
const headers = { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }

/** The platform mode's response: the model's deltas and then `done`, straight from its Stream. */
const alone = (taskId: string, text: string) => {
  let seq = 0
  return Stream.concat(
    Stream.map(model(text), (delta) => sse(taskId, { seq: ++seq, event: "delta", data: { text: delta } })),
    Stream.sync(() => sse(taskId, { seq: ++seq, event: "done", data: { resolution: "answered", taskId } }))
  )
}

const TurnsLive = HttpApiBuilder.group(PlainApi, "turns", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const turn = (taskId: string, conversationId: string, replyId: string, asked: string, events: PubSub.PubSub<TurnEvent>) =>
      Effect.gen(function*() {
        let seq = 0
        let text = ""
        yield* Stream.runForEach(model(asked), (delta) => {
          text += delta
          return PubSub.publish(events, { seq: ++seq, event: "delta", data: { text: delta } })
        })
        const done: TurnEvent = { seq: ++seq, event: "done", data: { resolution: "answered", taskId, conversationId } }
        yield* sql.withTransaction(Effect.zipRight(
          sql`UPDATE messages SET text = ${text}, status = 'done' WHERE id = ${replyId}`,
          sql`INSERT INTO turn_events (task_id, seq, event, data) VALUES (${taskId}, ${done.seq}, 'done', ${JSON.stringify(done.data)})`
        ))
        yield* PubSub.publish(events, done)
      })
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" }))
      .handle("create", () =>
        Effect.gen(function*() {
          const conversationId = randomUUID()
          yield* sql`INSERT INTO conversations (id, created_at) VALUES (${conversationId}, ${Date.now()})`
          return { conversationId }
        }).pipe(Effect.orDie))
      .handle("stream", ({ path, payload }) =>
        Effect.gen(function*() {
          const taskId = randomUUID()
          if (mode === "platform") return HttpServerResponse.stream(Stream.concat(opening, alone(taskId, payload.text)), headers)
          const replyId = randomUUID()
          yield* sql.withTransaction(
            sql`INSERT INTO messages (id, conversation_id, role, text, status) VALUES
              (${randomUUID()}, ${path.id}, 'user', ${payload.text}, 'done'),
              (${replyId}, ${path.id}, 'assistant', '', 'writing')`
          )
          const events = yield* PubSub.unbounded<TurnEvent>()
          // Subscribed in a scope the response's stream closes, made before the turn can publish.
          const follower = Stream.unwrapScoped(Effect.map(PubSub.subscribe(events), (queue) =>
            Stream.fromQueue(queue).pipe(Stream.takeUntil((e) => e.event === "done"))))
          yield* Effect.forkDaemon(turn(taskId, path.id, replyId, payload.text, events))
          return HttpServerResponse.stream(Stream.concat(opening, Stream.map(follower, (e) => sse(taskId, e))), headers)
        }).pipe(Effect.orDie))
  }))

const Tables = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`PRAGMA synchronous = NORMAL`
  yield* sql`CREATE TABLE conversations (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL)`
  yield* sql`CREATE TABLE messages (id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, role TEXT NOT NULL,
    text TEXT NOT NULL, status TEXT NOT NULL)`
  yield* sql`CREATE INDEX messages_conversation ON messages (conversation_id)`
  yield* sql`CREATE TABLE turn_events (task_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (task_id, seq))`
}))

const Database = Tables.pipe(Layer.provideMerge(SqliteClient.layer({ filename: path.join(dir!, "plain.sqlite") })))

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(PlainApi).pipe(Layer.provide(TurnsLive))),
  Layer.provide(Database),
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(port) })),
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.launch,
  NodeRuntime.runMain
)
