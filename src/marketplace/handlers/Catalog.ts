import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotFound } from "../../../schema/marketplace/Errors.js"
import { publicStatuses } from "../../../schema/marketplace/Package.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"

const orNotFound = (message: string) => <A>(option: Option.Option<A>) =>
  Option.match(option, { onNone: () => Effect.fail(new NotFound({ message })), onSome: Effect.succeed })

export const CatalogLive = HttpApiBuilder.group(MarketplaceApi, "catalog", (handlers) =>
  Effect.gen(function*() {
    const store = yield* CatalogStore
    return handlers
      .handle("categories", () => Effect.map(store.categories(publicStatuses), (items) => ({ items })))
      .handle("category", ({ path }) =>
        Effect.flatMap(store.category(path.slug, publicStatuses), orNotFound(`No category ${path.slug}`)))
      .handle("collections", () => Effect.map(store.publishedCollections, (items) => ({ items })))
      .handle("collection", ({ path }) =>
        Effect.flatMap(store.publishedCollection(path.slug, publicStatuses), orNotFound(`No collection ${path.slug}`)))
  }))
