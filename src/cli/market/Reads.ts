/**
 * `clark market` public reads besides search and packages: health, a
 * package's versions, categories, published collections and pages.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import { Effect, Option } from "effect"
import * as Render from "./Render.js"
import { connectionOptions, MarketFailure } from "./Settings.js"
import { packageName, request } from "./Shared.js"

export const health = Command.make("health", connectionOptions, (options) =>
  request(
    options,
    (api) =>
      api.system.health({ withResponse: true }).pipe(
        // 503 carries the Health body itself: print it as the failure line, and exit non-zero.
        Effect.catchTag("Unhealthy", ({ health }) => Effect.fail(new MarketFailure({ message: Render.health(health) })))
      ),
    Render.health
  )).pipe(
    Command.withDescription(
      "Check the marketplace and its database. Exits 1 when degraded or unreachable."
    )
  )

export const versions = Command.make("versions", { ...connectionOptions, name: packageName }, (options) =>
  request(
    options,
    (api) => api.packages.versions({ path: { name: options.name }, withResponse: true }),
    (list) => Render.versionTable(list.items)
  )).pipe(Command.withDescription("List a package's indexed versions, newest first"))

const optionalSlug = (what: string) =>
  Args.text({ name: "SLUG" }).pipe(Args.withDescription(`a ${what} slug: show that one only`), Args.optional)

export const categories = Command.make("categories", { ...connectionOptions, slug: optionalSlug("category") }, (options) =>
  Option.match(options.slug, {
    onNone: () =>
      request(options, (api) => api.catalog.categories({ withResponse: true }), (list) => Render.categoryTable(list.items)),
    onSome: (slug) => request(options, (api) => api.catalog.category({ path: { slug }, withResponse: true }), Render.category)
  })).pipe(Command.withDescription("List the categories, or show one. Counts are of public packages."))

export const collections = Command.make(
  "collections",
  { ...connectionOptions, slug: optionalSlug("collection") },
  (options) =>
    Option.match(options.slug, {
      onNone: () =>
        request(options, (api) => api.catalog.collections({ withResponse: true }), (list) => Render.collectionTable(list.items)),
      onSome: (slug) =>
        request(options, (api) => api.catalog.collection({ path: { slug }, withResponse: true }), Render.collection)
    })
).pipe(Command.withDescription("List the published collections, or show one. One is shown with its packages in editorial order."))

export const page = Command.make("page", {
  ...connectionOptions,
  slug: Args.text({ name: "SLUG" }).pipe(Args.withDescription("page slug; nested pages look like docs/getting-started"))
}, (options) =>
  request(
    options,
    (api) =>
      api.pages.page({ path: { slug: options.slug }, urlParams: { format: options.json ? "json" : "md" }, withResponse: true }),
    // Without --json the Markdown rendering is asked for, and printed as it came.
    (body) => (typeof body === "string" ? body.trimEnd() : JSON.stringify(body))
  )).pipe(Command.withDescription("Print a published page as Markdown. With --json, its JSON document."))
