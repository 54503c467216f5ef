/** Serving an HttpApi the way both services do. */
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer } from "@effect/platform"
import { Config, Effect, Layer } from "effect"

/**
 * `CLARK_TRACING`: `off` (the default) or `on`, for both services. Off, no span
 * is made, per request or per SQL statement: nothing exports them by default, and
 * making them (with a stack trace each) costs a good share of throughput
 * (docs/benchmarks.md, "Tracing"). On, every request gets its `http.server` span
 * and the work under it (handlers, SQL) its child spans, for whatever tracer the
 * program provides.
 */
export const TracingConfig = Config.literal("off", "on")("CLARK_TRACING").pipe(
  Config.withDefault("off"),
  Config.map((value) => value === "on")
)

export interface ServeOptions {
  /** Logs the start-up line once listening; by default "Listening on <address>". */
  readonly announce?: Effect.Effect<void, never, HttpServer.HttpServer>
}

/**
 * Serves an API on the provided HTTP server, with tracing as configured. Path
 * parameters may be long: a 214-character scoped name is up to 642 characters
 * URL-encoded.
 */
export const serveApi = <E, R>(api: Layer.Layer<HttpApi.Api, E, R>, options: ServeOptions = {}) =>
  Layer.unwrapEffect(Effect.map(TracingConfig, (tracing) => {
    const { announce } = options
    const served = HttpApiBuilder.serve().pipe(
      (layer) =>
        announce === undefined
          ? HttpServer.withLogAddress(layer)
          : Layer.effectDiscard(announce).pipe(Layer.provideMerge(layer)),
      Layer.provide(api),
      Layer.provide(HttpRouter.setRouterConfig({ maxParamLength: 1024 }))
    )
    return tracing
      ? served
      : served.pipe(
        HttpMiddleware.withTracerDisabledWhen(() => true),
        Layer.provide(Layer.setTracerEnabled(false))
      )
  }))

/**
 * A service's own layers (stores, engines) with tracing as configured: what they fork from their own runtime (a
 * turn's fiber, its checkpoints' statements) inherits the refs they were built with, not a request's. Off, those
 * fibers make no span either; before, every statement of a turn's checkpoint made one while requests made none.
 * Use the returned layer everywhere the service's layers are needed, so they are built once. A setting that is not
 * `on` or `off` fails `serveApi` with its ConfigError; here it is a defect.
 */
export const tracedAsConfigured = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(
    Effect.map(Effect.orDie(TracingConfig), (tracing) => (tracing ? layer : Layer.provide(layer, Layer.setTracerEnabled(false))))
  )
