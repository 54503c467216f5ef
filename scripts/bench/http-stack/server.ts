/**
 * One server of `npm run bench:http` (scripts/bench/http-stack.ts): the same two routes, a small JSON GET and a
 * small JSON POST, served by one of four stacks, so the difference between two of them is what a stack costs per
 * request and nothing else (no SQL, no handler work):
 *
 * - `plain`: node:http alone, JSON.parse and JSON.stringify;
 * - `fiber`: node:http running each request as an Effect fiber (the SSE one as an Effect Stream), no platform;
 * - `router`: an `HttpRouter` of the two routes on `NodeHttpServer`, no HttpApi (what the platform's server adapter
 *   and router cost without the API's decoding, encoding and middleware);
 * - `bare`: an HttpApi of the two endpoints on `NodeHttpServer`, `HttpApiBuilder.serve()`, tracing off as both
 *   services run by default (the library's floor);
 * - `marketplace`: the same endpoints with the marketplace's HTTP stack: `serveApi`, its Node server factory
 *   (parser errors in the envelope), the error envelope (request id, target check, guarded body) and the rate
 *   limiting middleware with its settings read (MARKETPLACE_RATE_LIMITS from the driver), over its services on a
 *   fresh SQLite file, as src/marketplace/Server.ts wires them;
 * - `node`: the same endpoints behind the node's `Authenticated` bearer middleware, with its error mapping
 *   (guarded bodies with the per-route rules), `serveApi` and its Node server factory.
 *
 *   node --import tsx scripts/bench/http-stack/server.ts --variant marketplace --root DIR --port N
 *
 * `--root` is the checkout whose product sources are served (the current one, or the baseline's worktree): the
 * bench's own endpoints stay the same, the stack around them is that checkout's.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpMiddleware,
  HttpRouter,
  HttpServer,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Redacted, Runtime, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { EventWriter } from "../../../services/node/TurnEngine.js"

const argument = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  const value = i === -1 ? undefined : process.argv[i + 1]
  if (value === undefined) throw new Error(`--${name} is required`)
  return value
}

const variant = argument("variant")
const root = argument("root")
const port = Number(argument("port"))
/** The bearer token of the node variant. */
export const benchToken = "bench-token-0123456789"

/** A module of the served checkout. */
const load = <A>(relative: string): Promise<A> => import(pathToFileURL(path.join(root, relative)).href) as Promise<A>

const Item = Schema.Struct({ id: Schema.Number, name: Schema.String, tags: Schema.Array(Schema.String) })
const Pong = Schema.Struct({ status: Schema.String, items: Schema.Array(Item) })
const Echo = Schema.Struct({ name: Schema.String, count: Schema.Number, note: Schema.optional(Schema.String) })

const pong: typeof Pong.Type = {
  status: "ok",
  items: [1, 2, 3].map((id) => ({ id, name: `item-${id}`, tags: ["alpha", "beta"] }))
}

/** The SSE route's events: what a short turn sends (three deltas and done). */
const events = [
  { taskId: "task-1", seq: 1, event: "delta", data: { messageId: "m-2", text: "Hi. " } },
  { taskId: "task-1", seq: 2, event: "delta", data: { messageId: "m-2", text: "Hello, " } },
  { taskId: "task-1", seq: 3, event: "delta", data: { messageId: "m-2", text: "world." } },
  { taskId: "task-1", seq: 4, event: "done", data: { status: "completed" } }
] as const

const sseText = (event: (typeof events)[number]) =>
  `id: ${event.taskId}:${event.seq}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`

/** The same events as a bare platform stream (one chunk each, encoded as they go). */
const sseStream = () => {
  const encoder = new TextEncoder()
  return HttpServerResponse.stream(
    Stream.map(Stream.fromIterable(events), (event) => encoder.encode(sseText(event))),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )
}

// Exits normally on SIGTERM, so `--cpu-prof` writes its profile.
process.once("SIGTERM", () => process.exit(0))

const plain = () => {
  const pongText = JSON.stringify(pong)
  Http.createServer((request, response) => {
    if (request.method === "GET" && request.url === "/bench/ping") {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(pongText) })
      response.end(pongText)
      return
    }
    if (request.method === "POST" && request.url === "/bench/echo") {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString("utf8")))
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        response.end(body)
      })
      return
    }
    if (request.method === "GET" && request.url === "/bench/events") {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      response.write(": connected\n\n")
      for (const event of events) response.write(sseText(event))
      response.end()
      return
    }
    response.writeHead(404).end()
  }).listen(port, "127.0.0.1")
}

/**
 * node:http with one Effect fiber per request and nothing of the platform: what the fiber (and, for SSE, an Effect
 * Stream run) costs by itself, the part of the adapter's cost no adapter can avoid.
 */
const fiber = () => {
  const pongText = JSON.stringify(pong)
  const runFork = Runtime.runFork(Runtime.defaultRuntime)
  const send = (response: Http.ServerResponse, text: string) =>
    Effect.async<void>((resume) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      response.end(text, () => resume(Effect.void))
    })
  Http.createServer((request, response) => {
    if (request.method === "GET" && request.url === "/bench/ping") {
      runFork(send(response, pongText))
    } else if (request.method === "POST" && request.url === "/bench/echo") {
      runFork(Effect.flatMap(
        Effect.async<Buffer>((resume) => {
          const chunks: Array<Buffer> = []
          request.on("data", (chunk: Buffer) => chunks.push(chunk))
          request.on("end", () => resume(Effect.succeed(Buffer.concat(chunks))))
        }),
        (body) => send(response, JSON.stringify(JSON.parse(body.toString("utf8"))))
      ))
    } else if (request.method === "GET" && request.url === "/bench/events") {
      runFork(Effect.zipRight(
        Effect.sync(() => {
          response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
          response.write(": connected\n\n")
        }),
        Stream.runForEach(Stream.fromIterable(events), (event) => Effect.sync(() => response.write(sseText(event)))).pipe(
          Effect.ensuring(Effect.sync(() => response.end()))
        )
      ))
    } else {
      response.writeHead(404).end()
    }
  }).listen(port, "127.0.0.1")
}

const launch = (served: Layer.Layer<never, unknown, never>) => NodeRuntime.runMain(Layer.launch(served) as Effect.Effect<never>)

const main = async () => {
  if (variant === "plain") return plain()
  if (variant === "fiber") return fiber()
  const listen = { host: "127.0.0.1", port }
  if (variant === "router") {
    const pongResponse = HttpServerResponse.unsafeJson(pong)
    const router = HttpRouter.empty.pipe(
      HttpRouter.get("/bench/ping", Effect.succeed(pongResponse)),
      HttpRouter.get("/bench/events", Effect.sync(sseStream)),
      HttpRouter.post(
        "/bench/echo",
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.map(request.json, (body) => HttpServerResponse.unsafeJson(body)))
      )
    )
    const served = HttpServer.serve(router).pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(Layer.setTracerEnabled(false)),
      Layer.provide(NodeHttpServer.layer(Http.createServer, listen))
    )
    return launch(served as Layer.Layer<never, unknown, never>)
  }
  if (variant === "bare") {
    const api = HttpApi.make("bench").add(
      HttpApiGroup.make("bench")
        .add(HttpApiEndpoint.get("ping", "/bench/ping").addSuccess(Pong))
        .add(HttpApiEndpoint.post("echo", "/bench/echo").setPayload(Echo).addSuccess(Echo))
        .add(HttpApiEndpoint.get("events", "/bench/events"))
    )
    const handlers = HttpApiBuilder.group(api, "bench", (h) =>
      h.handle("ping", () => Effect.succeed(pong)).handle("echo", ({ payload }) => Effect.succeed(payload))
        .handle("events", () => Effect.sync(sseStream)))
    const served = HttpApiBuilder.serve().pipe(
      HttpMiddleware.withTracerDisabledWhen(() => true),
      Layer.provide(HttpApiBuilder.api(api).pipe(Layer.provide(handlers))),
      Layer.provide(Layer.setTracerEnabled(false)),
      Layer.provide(NodeHttpServer.layer(Http.createServer, listen))
    )
    return launch(served as Layer.Layer<never, unknown, never>)
  }
  const { serveApi } = await load<typeof import("../../../src/http/ServeApi.js")>("src/http/ServeApi.ts")
  if (variant === "marketplace") {
    const Server = await load<typeof import("../../../src/marketplace/Server.js")>("src/marketplace/Server.ts")
    const { createServer } = await load<typeof import("../../../src/marketplace/http/ClientError.js")>(
      "src/marketplace/http/ClientError.ts"
    )
    const { ErrorEnvelopeLive } = await load<typeof import("../../../src/marketplace/http/ErrorEnvelope.js")>(
      "src/marketplace/http/ErrorEnvelope.ts"
    )
    const { RateLimitingLive } = await load<typeof import("../../../src/marketplace/http/RateLimiting.js")>(
      "src/marketplace/http/RateLimiting.ts"
    )
    const Database = await load<typeof import("../../../layers/marketplace/sql/Database.js")>("layers/marketplace/sql/Database.ts")
    const api = HttpApi.make("bench").add(
      HttpApiGroup.make("bench")
        .add(HttpApiEndpoint.get("ping", "/api/v1/bench/ping").addSuccess(Pong))
        .add(HttpApiEndpoint.post("echo", "/api/v1/bench/echo").setPayload(Echo).addSuccess(Echo))
    )
    const handlers = HttpApiBuilder.group(api, "bench", (h) =>
      h.handle("ping", () => Effect.succeed(pong)).handle("echo", ({ payload }) => Effect.succeed(payload)))
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-http-")), "marketplace.db")
    const url = Database.parseDatabaseUrl(`sqlite:${file}`)!
    const built = HttpApiBuilder.api(api).pipe(
      Layer.provide(handlers),
      Layer.provide(RateLimitingLive.pipe(Layer.provide(ErrorEnvelopeLive))),
      Layer.provide(Server.ServicesLive),
      Layer.provide(Server.SettingsLive),
      Layer.provide(Database.layer(url))
    ) as Layer.Layer<HttpApi.Api>
    return launch(
      serveApi(built, { announce: Effect.void as Effect.Effect<void, never, HttpServer.HttpServer> }).pipe(
        Layer.provide(NodeHttpServer.layer(createServer, listen))
      ) as Layer.Layer<never, unknown, never>
    )
  }
  if (variant === "node") {
    const { Authenticated } = await load<typeof import("../../../schema/node/Security.js")>("schema/node/Security.ts")
    const { refusals } = await load<typeof import("../../../schema/node/Errors.js")>("schema/node/Errors.ts")
    const { NodeIdentity } = await load<typeof import("../../../services/node/Identity.js")>("services/node/Identity.ts")
    const { AuthenticationLive } = await load<typeof import("../../../src/node/http/Authentication.js")>(
      "src/node/http/Authentication.ts"
    )
    const { ErrorMappingLive } = await load<typeof import("../../../src/node/http/ErrorMapping.js")>(
      "src/node/http/ErrorMapping.ts"
    )
    const { createServer } = await load<typeof import("../../../src/node/http/ClientError.js")>("src/node/http/ClientError.ts")
    const Sse = await load<typeof import("../../../src/node/http/Sse.js")>("src/node/http/Sse.ts")
    const api = HttpApi.make("bench").add(
      HttpApiGroup.make("bench")
        .add(HttpApiEndpoint.get("ping", "/bench/ping").addSuccess(Pong))
        .add(HttpApiEndpoint.post("echo", "/bench/echo").setPayload(Echo).addSuccess(Echo))
        .add(HttpApiEndpoint.get("events", "/bench/events"))
        .middleware(Authenticated)
    ).addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
    const handlers = HttpApiBuilder.group(api, "bench", (h) =>
      h.handle("ping", () => Effect.succeed(pong)).handle("echo", ({ payload }) => Effect.succeed(payload))
        // The node's own SSE response (src/node/http/Sse.ts) of the same events, as one piece like a turn's log.
        // Given as a ticket's `written` (the follower writes its own bytes) on a Stream of the events, which is
        // what a baseline from before that change takes.
        .handle("events", () =>
          Sse.response(Object.assign(Stream.fromIterable(events as never), {
            written: <O>(writer: EventWriter<O>) => Stream.make(writer.write(events as never))
          }) as never)))
    const identity = Layer.succeed(NodeIdentity, {
      nodeId: "bench",
      label: "bench",
      fingerprint: "bench",
      localToken: Redacted.make(benchToken),
      appSecret: Redacted.make("bench-secret")
    } as never)
    const built = HttpApiBuilder.api(api).pipe(
      Layer.provide(handlers),
      Layer.provide(AuthenticationLive),
      Layer.provide(ErrorMappingLive),
      Layer.provide(identity)
    ) as Layer.Layer<HttpApi.Api>
    return launch(
      serveApi(built, { announce: Effect.void as Effect.Effect<void, never, HttpServer.HttpServer> }).pipe(
        Layer.provide(NodeHttpServer.layer(createServer, listen))
      ) as Layer.Layer<never, unknown, never>
    )
  }
  throw new Error(`--variant must be plain, fiber, router, bare, marketplace or node, got ${variant}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
