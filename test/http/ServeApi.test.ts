/**
 * `CLARK_TRACING` takes effect in the server both services use: on, a request
 * gets its `http.server` span, recorded by the tracer the program provides, and
 * the handler runs inside it; off (the default), neither.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option, Schema, Tracer } from "effect"
import { createServer } from "node:http"
import { serveApi } from "../../src/http/ServeApi.js"

class Probe extends HttpApiGroup.make("probe").add(HttpApiEndpoint.get("span", "/span").addSuccess(Schema.Boolean)) {}
class ProbeApi extends HttpApi.make("probe").add(Probe) {}

/** The handler answers whether it runs inside a span. */
const ProbeLive = HttpApiBuilder.api(ProbeApi).pipe(
  Layer.provide(HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
    handlers.handle("span", () => Effect.map(Effect.option(Effect.currentSpan), Option.isSome))))
)

/** A tracer that records the name of every span started, and makes them as the default tracer does. */
const recording = Effect.map(Effect.tracer, (native) => {
  const names: Array<string> = []
  const tracer = Tracer.make({
    span: (name, ...rest) => {
      names.push(name)
      return native.span(name, ...rest)
    },
    context: native.context
  })
  return { names, tracer }
})

/** One GET /span against the shared server set-up under `env`; the handler's answer and the spans recorded. */
const probe = (env: ReadonlyArray<readonly [string, string]>) =>
  Effect.gen(function*() {
    const { names, tracer } = yield* recording
    const server = serveApi(ProbeLive).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(env)))),
      Layer.provide(Layer.setTracer(tracer))
    )
    const context = yield* Layer.build(server)
    const baseUrl = yield* HttpServer.addressFormattedWith(Effect.succeed).pipe(Effect.provide(context))
    const inSpan = yield* Effect.promise(() => fetch(`${baseUrl}/span`).then((response) => response.json()))
    return { inSpan, spans: [...names] }
  })

describe("CLARK_TRACING", () => {
  it.scoped("on: every request gets its http.server span and the handler runs inside it", () =>
    Effect.gen(function*() {
      const { inSpan, spans } = yield* probe([["CLARK_TRACING", "on"]])
      expect(inSpan).toBe(true)
      expect(spans).toContain("http.server GET")
    }))

  it.scoped("off by default: no span is made", () =>
    Effect.gen(function*() {
      const { inSpan, spans } = yield* probe([])
      expect(inSpan).toBe(false)
      expect(spans).toEqual([])
    }))

  it.scoped("off: no span is made", () =>
    Effect.gen(function*() {
      const { inSpan, spans } = yield* probe([["CLARK_TRACING", "off"]])
      expect(inSpan).toBe(false)
      expect(spans).toEqual([])
    }))

  it.scoped("another value stops the server at start", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(probe([["CLARK_TRACING", "yes"]]))
      expect(String(failure)).toContain("CLARK_TRACING")
    }))
})
