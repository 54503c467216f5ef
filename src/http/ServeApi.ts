/** Serving an HttpApi the way both services do. */
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { Layer } from "effect"

/**
 * Serves an API on the provided HTTP server. Per-request tracing is off: nothing
 * exports spans and it costs 10-25 % of throughput. Path parameters may be
 * long: a 214-character scoped name is up to 642 characters URL-encoded.
 */
export const serveApi = <E, R>(api: Layer.Layer<HttpApi.Api, E, R>) =>
  HttpApiBuilder.serve().pipe(
    HttpServer.withLogAddress,
    Layer.provide(api),
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 1024 }))
  )
