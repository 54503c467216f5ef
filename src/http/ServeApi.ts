/** Serving an HttpApi the way both services do. */
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { Layer } from "effect"

/**
 * Serves an API on the provided HTTP server. Tracing is off, per request and for
 * SQL statements: nothing exports spans, and making them (with a stack trace
 * each) costs a good share of throughput. Path parameters may be long: a
 * 214-character scoped name is up to 642 characters URL-encoded.
 */
export const serveApi = <E, R>(api: Layer.Layer<HttpApi.Api, E, R>) =>
  HttpApiBuilder.serve().pipe(
    HttpServer.withLogAddress,
    Layer.provide(api),
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 1024 })),
    Layer.provide(Layer.setTracerEnabled(false))
  )
