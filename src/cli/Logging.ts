/** Logger chosen by `LOG_FORMAT` (json | pretty; json in production) and `LOG_LEVEL` (default info). */
import { Config, Effect, Layer, Logger, LogLevel } from "effect"

export const Logging = Layer.unwrapEffect(
  Effect.gen(function*() {
    const environment = yield* Config.string("MARKETPLACE_ENVIRONMENT").pipe(Config.withDefault("development"))
    const format = yield* Config.literal("json", "pretty")("LOG_FORMAT").pipe(
      Config.withDefault(environment === "production" ? "json" as const : "pretty" as const)
    )
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    return Layer.merge(format === "json" ? Logger.json : Logger.pretty, Logger.minimumLogLevel(level))
  }).pipe(Effect.orDie)
)
