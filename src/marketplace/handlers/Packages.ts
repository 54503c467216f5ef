import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotFound, ValidationFailed } from "../../../schema/marketplace/Errors.js"
import {
  type ListParams,
  PackageDetail,
  PackagePage,
  type PackageSummary,
  publicStatuses,
  SearchPage,
  VersionList
} from "../../../schema/marketplace/Package.js"
import * as Cursor from "../../../services/marketplace/Cursor.js"
import { coordinate } from "../../../services/marketplace/Install.js"
import * as Listing from "../../../services/marketplace/Listing.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import { encodedJson } from "../../http/EncodedJson.js"

const cursorMessages = {
  malformed: "cursor does not decode; pass back the nextCursor of the previous response unchanged",
  foreign: "cursor belongs to another sort or other filters"
} as const

/**
 * One page of packages under the listing rules, with the cursor of the next page.
 * The store is an argument, not a service to provide per request: providing one
 * copies the request's whole context.
 */
export const findPage = (
  store: PackageStore["Type"],
  params: ListParams,
  route: "packages" | "search"
): Effect.Effect<{ readonly items: ReadonlyArray<PackageSummary>; readonly nextCursor: string | null }, ValidationFailed> => {
  // Every list and search runs this: a map, not a generator, which costs several times more.
  const plan = Listing.plan(params, route)
  if (Either.isLeft(plan)) {
    const { parameter, problem } = plan.left
    return Effect.fail(
      new ValidationFailed({
        message: `Invalid request: ${parameter}`,
        details: { issues: [{ path: parameter, message: cursorMessages[problem] }] }
      })
    )
  }
  const { binding, query } = plan.right
  return Effect.map(store.find(query), (slice) => ({
    items: slice.items,
    nextCursor: slice.next === undefined ? null : Cursor.encode(binding, slice.next)
  }))
}

const packageNotFound = (name: string) => new NotFound({ message: `No package named ${name}` })

export const PackagesLive = HttpApiBuilder.group(MarketplaceApi, "packages", (handlers) =>
  Effect.gen(function*() {
    const store = yield* PackageStore
    return handlers
      // The read routes answer with bodies the store built in the declared shape (see EncodedJson).
      .handle("list", ({ urlParams }) =>
        findPage(store, urlParams, "packages").pipe(Effect.map((page) => encodedJson(PackagePage, page))))
      .handle("get", ({ path }) =>
        store.detail(path.name, publicStatuses).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(packageNotFound(path.name)),
            onSome: (detail) => Effect.succeed(encodedJson(PackageDetail, detail))
          }))
        ))
      .handle("versions", ({ path }) =>
        store.versions(path.name, publicStatuses).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(packageNotFound(path.name)),
            onSome: (items) => Effect.succeed(encodedJson(VersionList, { items }))
          }))
        ))
      .handle("install", ({ path, urlParams }) =>
        store.release(path.name, urlParams.version, publicStatuses).pipe(
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.fail(
                urlParams.version === undefined
                  ? new NotFound({ message: `No indexed version of ${path.name}` })
                  : new NotFound({ message: `No indexed version ${urlParams.version} of ${path.name}` })
              ),
            onSome: (release) => Effect.succeed(coordinate(release))
          }))
        ))
  }))

export const SearchLive = HttpApiBuilder.group(MarketplaceApi, "search", (handlers) =>
  Effect.gen(function*() {
    const store = yield* PackageStore
    return handlers.handle("search", ({ urlParams }) =>
      findPage(store, urlParams, "search").pipe(
        Effect.map((page) => encodedJson(SearchPage, { query: urlParams.q ?? "", ...page }))
      ))
  }))
