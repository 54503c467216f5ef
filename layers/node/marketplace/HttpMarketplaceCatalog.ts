/**
 * MarketplaceCatalog over HTTP with the marketplace's typed client (`HttpApiClient` of `MarketplaceApi`).
 * The base URL is `CC_MARKETPLACE_URL` (the marketplace's origin, as `clark marketplace serve` prints it);
 * without it the directory lists local folders only and says so.
 */
import { FetchHttpClient, HttpApiClient } from "@effect/platform"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { type CatalogPage, MarketplaceCatalog } from "../../../services/node/MarketplaceCatalog.js"

/** A directory page: enough to choose from; the app searches for the rest. */
export const pageSize = 20
const timeout = Duration.seconds(5)

export const make = (url: string | undefined) =>
  Effect.gen(function*() {
    if (url === undefined) {
      const none: CatalogPage = { status: "not-configured", url: null, packages: [] }
      return MarketplaceCatalog.of({ search: () => Effect.succeed(none), detail: () => Effect.succeed(Option.none()) })
    }
    // The contract carries its `/api/v1` prefix: the client is given the origin.
    const baseUrl = url.replace(/\/+$/, "")
    const client = yield* HttpApiClient.make(MarketplaceApi, { baseUrl }).pipe(Effect.provide(FetchHttpClient.layer))

    const detail = (name: string) =>
      client.packages.get({ path: { name } }).pipe(
        Effect.timeout(timeout),
        Effect.map(Option.some),
        Effect.catchAll(() => Effect.succeed(Option.none()))
      )

    const search = (q: string | undefined) =>
      Effect.gen(function*() {
        const names = yield* (q === undefined || q.trim() === ""
          ? client.packages.list({ urlParams: { limit: pageSize } })
          : client.search.search({ urlParams: { q, limit: pageSize } })).pipe(
            Effect.timeout(timeout),
            Effect.map((page) => page.items.map((item) => item.name))
          )
        const details = yield* Effect.forEach(names, detail, { concurrency: 8 })
        return { status: "ok", url, packages: details.flatMap(Option.toArray) } satisfies CatalogPage
      }).pipe(Effect.catchAll(() => Effect.succeed<CatalogPage>({ status: "unreachable", url, packages: [] })))

    return MarketplaceCatalog.of({ search, detail })
  })

export const layer = (url: string | undefined) => Layer.effect(MarketplaceCatalog, make(url))

export const layerConfig = Layer.unwrapEffect(
  Effect.map(
    Config.option(Config.string("CC_MARKETPLACE_URL")).pipe(Effect.orDie),
    (url) => layer(Option.getOrUndefined(url))
  )
)
