/**
 * A real node HTTP server on a loopback port over a real data dir, built inside
 * the test's scope: it runs on the test's clock, so TestClock drives delays,
 * wall clocks and expiries while requests go over real HTTP.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Duration, Effect, Layer, Redacted, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as NoModel from "../../layers/node/model/NoModel.js"
import * as Scripted from "../../layers/node/model/Scripted.js"
import type { ModelProvider } from "../../services/node/ModelProvider.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"
import type { TurnSettings } from "../../layers/node/TurnEngine.js"
import { serveApi } from "../../src/http/ServeApi.js"
import { createServer } from "../../src/node/http/ClientError.js"
import { ApiLive, type NodeOptions, ServicesLive } from "../../src/node/Server.js"

export const appSecret = "test-app-secret"

export type As = "person" | "voice" | "cli-api" | "none" | "wrong-token"

export interface RunningNode {
  readonly baseUrl: string
  /** The node's services as its routes use them (a test drives one directly where no route reaches it yet). */
  readonly services: Context.Context<Layer.Layer.Success<ReturnType<typeof ServicesLive>>>
  readonly dataDir: string
  readonly token: string
  readonly headers: (as: As) => Record<string, string>
  readonly request: (
    method: string,
    path: string,
    options?: { readonly body?: unknown; readonly as?: As; readonly headers?: Record<string, string> }
  ) => Effect.Effect<{ readonly status: number; readonly headers: Headers; readonly body: any }>
  /** Opens an SSE stream and collects its events as they arrive. */
  readonly stream: (
    path: string,
    body: unknown,
    options?: { readonly as?: As; readonly headers?: Record<string, string> }
  ) => Effect.Effect<SseStream, never, Scope.Scope>
}

export interface SseEvent {
  readonly id: string | undefined
  readonly event: string
  readonly data: any
}

export interface SseStream {
  readonly status: number
  readonly events: Array<SseEvent>
  /** Waits (on real time) until `predicate` holds for the events received so far. */
  readonly until: (predicate: (events: ReadonlyArray<SseEvent>) => boolean) => Effect.Effect<ReadonlyArray<SseEvent>>
  readonly ended: Effect.Effect<ReadonlyArray<SseEvent>>
  /** Drops the connection, as a client that goes away. */
  readonly abort: Effect.Effect<void>
}

export class TestNode extends Context.Tag("test/TestNode")<TestNode, RunningNode>() {}

export const defaultTurns: TurnSettings = {
  wallClock: Duration.minutes(5),
  hostControlWait: Duration.seconds(5),
  questionTtl: Duration.hours(24),
  waitBudget: Duration.seconds(60)
}

export const makeDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "clark-node-"))

const parse = (chunk: string): SseEvent | undefined => {
  let id: string | undefined
  let event = "message"
  const data: Array<string> = []
  for (const line of chunk.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4)
    else if (line.startsWith("event: ")) event = line.slice(7)
    else if (line.startsWith("data: ")) data.push(line.slice(6))
  }
  return data.length === 0 ? undefined : { id, event, data: JSON.parse(data.join("\n")) }
}

/** A node serving `script` on `dataDir` (a new temporary one unless given). */
export const layer = (options: {
  readonly script?: Scripted.ScriptInput
  /** "none" runs the node without a model; a layer runs it with that model (a provider against a local server). */
  readonly model?: "scripted" | "none" | Layer.Layer<ModelProvider>
  readonly dataDir?: string
  readonly turns?: Partial<TurnSettings>
  /** Replaces the node's tile fetcher. */
  readonly mapTiles?: NodeOptions["mapTiles"]
  /** The marketplace of the package directory; none unless given. */
  readonly marketplaceUrl?: string
  /** The npm registry of marketplace packages; none unless given. */
  readonly registryUrl?: string
  /** Replaces the service packages' runtime (the real MCP runtime with its defaults otherwise). */
  readonly serviceRuntime?: NodeOptions["serviceRuntime"]
  /** The engine versions the host application passes at launch; none unless given. */
  readonly engine?: NodeOptions["engine"]
}) =>
  Layer.scoped(
    TestNode,
    Effect.gen(function*() {
      const dataDir = options.dataDir ?? makeDataDir()
      const script = typeof options.model === "object" ? options.model : options.model === "none" ? NoModel.layer : Scripted.fromScript(
        (yield* Effect.orDie(
          Effect.try(() =>
            // Decoding fills the script's defaults.
            Scripted.decodeScript(options.script ?? {})
          )
        ))
      )
      const nodeOptions: NodeOptions = {
        dataDir,
        appSecret: Redacted.make(appSecret),
        model: script,
        turns: { ...defaultTurns, ...options.turns },
        mapTiles: options.mapTiles,
        marketplaceUrl: options.marketplaceUrl ?? null,
        registryUrl: options.registryUrl ?? null,
        serviceRuntime: options.serviceRuntime,
        engine: options.engine ?? null
      }
      // Built first, so the server closes before them (as `serve` does) and a test can reach them.
      const services = yield* Layer.build(ServicesLive(nodeOptions))
      const server = serveApi(ApiLive(nodeOptions, Layer.succeedContext(services))).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
      const context = yield* Layer.build(server)
      // Message rule 6 before the server closes, as `serve` drains turns: the server's close waits for open SSE
      // streams, which end only when their turns are stopped (added last, so it runs first).
      yield* Effect.addFinalizer(() => Effect.flatMap(TurnEngine, (engine) => engine.shutdown).pipe(Effect.provide(services)))
      const baseUrl = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(address)).pipe(
        Effect.provide(context)
      )
      const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
      const headers = (as: As): Record<string, string> => {
        switch (as) {
          case "none":
            return {}
          case "wrong-token":
            return { authorization: "Bearer not-the-token" }
          case "cli-api":
            return { authorization: `Bearer ${token}` }
          case "person":
            return { authorization: `Bearer ${token}`, "x-app-secret": appSecret }
          case "voice":
            return { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "x-app-channel": "voice" }
        }
      }
      const request: RunningNode["request"] = (method, p, opts = {}) =>
        Effect.promise(async () => {
          const response = await fetch(`${baseUrl}${p}`, {
            method,
            headers: {
              ...headers(opts.as ?? "person"),
              ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
              ...opts.headers
            },
            ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) })
          })
          const text = await response.text()
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // not JSON
          }
          return { status: response.status, headers: response.headers, body }
        })
      const stream: RunningNode["stream"] = (p, body, opts = {}) =>
        Effect.gen(function*() {
          const controller = new AbortController()
          const response = yield* Effect.promise(() =>
            fetch(`${baseUrl}${p}`, {
              method: "POST",
              headers: { ...headers(opts.as ?? "person"), "content-type": "application/json", ...opts.headers },
              body: JSON.stringify(body),
              signal: controller.signal
            })
          )
          const events: Array<SseEvent> = []
          let listeners: Array<() => void> = []
          let done = false
          const notify = () => {
            const current = listeners
            listeners = []
            for (const listener of current) listener()
          }
          const pump = (async () => {
            if (response.body === null) return
            const reader = response.body.getReader()
            const decoder = new TextDecoder()
            let buffer = ""
            try {
              for (;;) {
                const { done: finished, value } = await reader.read()
                if (finished) break
                buffer += decoder.decode(value, { stream: true })
                let end = buffer.indexOf("\n\n")
                while (end >= 0) {
                  const event = parse(buffer.slice(0, end))
                  buffer = buffer.slice(end + 2)
                  if (event !== undefined) events.push(event)
                  end = buffer.indexOf("\n\n")
                }
                notify()
              }
            } catch {
              // aborted
            } finally {
              done = true
              notify()
            }
          })()
          yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
          const until: SseStream["until"] = (predicate) =>
            Effect.promise(() =>
              new Promise<ReadonlyArray<SseEvent>>((resolve, reject) => {
                const check = () => {
                  if (predicate(events)) resolve([...events])
                  else if (done) reject(new Error(`stream ended before the condition held: ${JSON.stringify(events)}`))
                  else listeners.push(check)
                }
                check()
              })
            )
          return {
            status: response.status,
            events,
            until,
            ended: Effect.promise(() => pump.then(() => [...events])),
            abort: Effect.sync(() => controller.abort())
          } satisfies SseStream
        })
      return { baseUrl, services, dataDir, token, headers, request, stream } satisfies RunningNode
    })
  )
