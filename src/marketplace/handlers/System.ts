import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { Clock, DateTime, Effect } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { type Health, Unhealthy } from "../../../schema/marketplace/System.js"
import { DatabaseHealth } from "../../../services/marketplace/DatabaseHealth.js"
import { Settings } from "../Settings.js"

export const SystemLive = HttpApiBuilder.group(MarketplaceApi, "system", (handlers) =>
  Effect.gen(function*() {
    const database = yield* DatabaseHealth
    const settings = yield* Settings
    // Built by its first request, not at start-up, as the node does: generating it takes tens of milliseconds
    // that a server starting (or a health check waiting on it) should not spend.
    const description = yield* Effect.cached(Effect.sync(() => OpenApi.fromApi(MarketplaceApi)))
    return handlers
      .handle("health", () =>
        Effect.gen(function*() {
          const ok = yield* database.check
          const checkedAt = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
          const health: Health = {
            status: ok ? "ok" : "degraded",
            environment: settings.environment,
            checkedAt,
            checks: { database: ok ? "ok" : "error" }
          }
          return ok ? health : yield* new Unhealthy({ health })
        }))
      .handle("openapi", () => description)
  }))
