/**
 * `clark market …`: a client of a running marketplace through the typed client
 * derived from its HttpApi contract: search, package detail, install
 * coordinates, the signed-in account, and the curator's commands.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Effect, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { CollectionCommand } from "../../schema/marketplace/Catalog.js"
import { CurationStatus, Isolation, Sort } from "../../schema/marketplace/Package.js"
import { load } from "./Lazy.js"
import type { Call, MarketClient } from "./market/Client.js"
import * as Render from "./market/Render.js"
import { connectionOptions, type ConnectionOptions, defaultMarketplaceUrl } from "./market/Settings.js"

/**
 * Calls the marketplace and prints the result. The typed client and the contract it is derived from are
 * imported when a command runs (Lazy.ts).
 */
const request = <A, E>(options: ConnectionOptions, call: Call<A, E>, render: (result: A) => string) =>
  load(() => import("./market/Client.js"), (Client) => Client.request(options, call, render))

type Given<F> = { [K in keyof F]?: F[K] extends Option.Option<infer V> ? V : never }

/** The fields that were given, for the contract's optional fields (absent, never undefined). */
const given = <F extends Record<string, Option.Option<unknown>>>(fields: F): Given<F> =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([key, value]) => (Option.isSome(value) ? [[key, value.value]] : []))
  ) as Given<F>

const optionalText = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

const packageName = Args.text({ name: "NAME" }).pipe(
  Args.withDescription("registry package name; scoped names look like @scope/name")
)

// ---------------------------------------------------------------------------
// packages

const search = Command.make("search", {
  ...connectionOptions,
  query: Args.text({ name: "QUERY" }).pipe(
    Args.withDescription("full-text query (words are joined); without one, packages browse by recency"),
    Args.repeated
  ),
  category: optionalText("category", "category slug"),
  kind: optionalText("kind", "facet kind of the latest version"),
  isolation: Options.choice("isolation", Isolation.literals).pipe(
    Options.withDescription("facet isolation of the latest version"),
    Options.optional
  ),
  platform: optionalText("platform", "platform of the latest version"),
  publisher: optionalText("publisher", "publisher slug"),
  curation: Options.choice("curation", ["listed", "featured"]).pipe(
    Options.withDescription("curation status"),
    Options.optional
  ),
  sort: Options.choice("sort", Sort.literals).pipe(
    Options.withDescription("order of results; lists through GET /packages, since search orders by relevance itself"),
    Options.optional
  ),
  limit: Options.integer("limit").pipe(Options.withDescription("results per page, 1-100 (default 20)"), Options.optional),
  cursor: optionalText("cursor", "the `more: --cursor …` value of the previous page")
}, (options) => {
  const query = options.query.join(" ").trim()
  const filters = given({
    q: Option.liftPredicate(query, (q) => q !== ""),
    category: options.category,
    kind: options.kind,
    isolation: options.isolation,
    platform: options.platform,
    publisher: options.publisher,
    curation: options.curation,
    limit: options.limit,
    cursor: options.cursor
  })
  return request(
    options,
    (api) =>
      Option.match(options.sort, {
        onNone: () => api.search.search({ urlParams: filters, withResponse: true }),
        onSome: (sort) => api.packages.list({ urlParams: { ...filters, sort }, withResponse: true })
      }),
    (page) => Render.packageTable(page.items, page.nextCursor)
  )
}).pipe(Command.withDescription("Search the public packages (GET /search, or GET /packages with --sort)"))

const show = Command.make("show", { ...connectionOptions, name: packageName }, (options) =>
  request(
    options,
    (api) => api.packages.get({ path: { name: options.name }, withResponse: true }),
    Render.packageDetail
  )).pipe(Command.withDescription("Show a package: its fields, latest version and versions"))

/** `name@version` as npm writes it; the `@` of a scope is not a version separator. */
const splitVersion = (spec: string): { readonly name: string; readonly version: Option.Option<string> } => {
  const at = spec.lastIndexOf("@")
  return at <= 0 ? { name: spec, version: Option.none() } : { name: spec.slice(0, at), version: Option.some(spec.slice(at + 1)) }
}

// @effect/cli reserves `--version` for the program's own version, so the version rides on the name, as with npm;
// `install NAME --version V` is folded into that form before parsing (market/InstallVersion.ts).
const install = Command.make("install", {
  ...connectionOptions,
  spec: Args.text({ name: "NAME[@VERSION]" }).pipe(
    Args.withDescription("registry package name, optionally with a published version: @scope/name@1.2.0, or --version 1.2.0 (default: the latest)")
  )
}, (options) => {
  const { name, version } = splitVersion(options.spec)
  return request(
    options,
    (api) => api.packages.install({ path: { name }, urlParams: given({ version }), withResponse: true }),
    Render.installCoordinate
  )
}).pipe(
  Command.withDescription(
    "Print a package's install coordinate: version, integrity, the command line and the app's deep link"
  )
)

// ---------------------------------------------------------------------------
// account

const me = Command.make("me", connectionOptions, (options) =>
  request(options, (api) => api.account.me({ withResponse: true }), Render.profile)).pipe(
    Command.withDescription("Show the account of the credential and the credential's scopes")
  )

// ---------------------------------------------------------------------------
// curation

const idempotencyNote =
  "Sends the header idempotency-key: --idempotency-key, else a random key made once per invocation, " +
  "so a transport retry inside the invocation is replayed by the marketplace, never applied twice. " +
  "Needs the scope packages:curate."

const idempotencyKey = optionalText(
  "idempotency-key",
  "1-255 characters; the marketplace replays the answer to a repeat of the same request for 24 hours"
)

type PostOptions = ConnectionOptions & { readonly idempotencyKey: Option.Option<string> }

const idempotencyHeaders = (options: PostOptions) =>
  Effect.map(
    Option.match(options.idempotencyKey, { onNone: () => Effect.sync(randomUUID), onSome: Effect.succeed }),
    (key) => ({ "idempotency-key": key })
  )

const status = Command.make("status", {
  ...connectionOptions,
  idempotencyKey,
  name: packageName,
  status: Args.choice(CurationStatus.literals.map((s) => [s, s] as [string, CurationStatus]), { name: "STATUS" }).pipe(
    Args.withDescription(`one of ${CurationStatus.literals.join(", ")}`)
  ),
  reason: optionalText("reason", "why, up to 500 characters")
}, (options) =>
  request(
    options,
    (api) =>
      Effect.flatMap(idempotencyHeaders(options), (headers) =>
        api.curation.setStatus({
          path: { name: options.name },
          headers,
          payload: { status: options.status, ...given({ reason: options.reason }) },
          withResponse: true
        })),
    Render.curationResult
  )).pipe(Command.withDescription(`Set a package's curation status. ${idempotencyNote}`))

const feature = Command.make("feature", {
  ...connectionOptions,
  idempotencyKey,
  name: packageName,
  off: Options.boolean("off").pipe(Options.withDescription("stop featuring it (it becomes listed)"))
}, (options) =>
  request(
    options,
    (api) =>
      Effect.flatMap(idempotencyHeaders(options), (headers) =>
        api.curation.setFeatured({
          path: { name: options.name },
          headers,
          payload: { featured: !options.off },
          withResponse: true
        })),
    Render.curationResult
  )).pipe(Command.withDescription(`Feature a package, or with --off return it to listed. ${idempotencyNote}`))

const curate = Command.make("curate").pipe(
  Command.withDescription("Curator commands on packages (scope packages:curate)"),
  Command.withSubcommands([status, feature])
)

// ---------------------------------------------------------------------------
// collections

const slug = Args.text({ name: "SLUG" }).pipe(Args.withDescription("collection slug"))
const collectionPackage = Args.text({ name: "PACKAGE" }).pipe(Args.withDescription("registry package name"))
const collectionOptions = { ...connectionOptions, idempotencyKey, slug }

const title = Options.text("title").pipe(Options.withDescription("1-120 characters"))
const description = optionalText("description", "up to 600 characters")
const position = Options.integer("position").pipe(
  Options.withDescription("order among collections, 0-10000"),
  Options.optional
)

type CollectionRequest = Parameters<MarketClient["curation"]["collectionCommand"]>[0]

/**
 * Sends one collection command. The command is decoded with the contract's
 * schema first, which fills the defaults of `create` and checks the limits.
 */
const sendCollectionCommand = (options: PostOptions & { readonly slug: string }, command: typeof CollectionCommand.Encoded) =>
  request(
    options,
    (api) =>
      Effect.gen(function*() {
        const payload = yield* Schema.decodeUnknown(CollectionCommand)(command)
        const headers = yield* idempotencyHeaders(options)
        // The client types one request per payload variant; this one carries whichever variant was decoded.
        return yield* api.curation.collectionCommand(
          { path: { slug: options.slug }, headers, payload, withResponse: true } as CollectionRequest & { readonly withResponse: true }
        )
      }),
    Render.collectionState
  )

const collectionShow = Command.make("show", { ...connectionOptions, slug }, (options) =>
  request(
    options,
    (api) => api.curation.collection({ path: { slug: options.slug }, withResponse: true }),
    Render.collectionState
  )).pipe(Command.withDescription("Show a collection as curators see it: unpublished state and every item"))

const create = Command.make("create", {
  ...collectionOptions,
  title,
  description,
  published: Options.boolean("published").pipe(Options.withDescription("publish it at once (default: unpublished)")),
  position
}, (options) =>
  sendCollectionCommand(options, {
    action: "create",
    title: options.title,
    published: options.published,
    ...given({ description: options.description, position: options.position })
  })).pipe(Command.withDescription(`Create a collection. ${idempotencyNote}`))

const update = Command.make("update", {
  ...collectionOptions,
  title: Options.optional(title),
  description,
  published: Options.choice("published", ["true", "false"]).pipe(
    Options.withDescription("publish or unpublish it"),
    Options.map((value) => value === "true"),
    Options.optional
  ),
  position
}, (options) =>
  sendCollectionCommand(options, {
    action: "update",
    ...given({
      title: options.title,
      description: options.description,
      published: options.published,
      position: options.position
    })
  })).pipe(Command.withDescription(`Change a collection's title, description, publication or position. ${idempotencyNote}`))

const add = Command.make("add", {
  ...collectionOptions,
  packageName: collectionPackage,
  note: optionalText("note", "up to 300 characters")
}, (options) =>
  sendCollectionCommand(options, {
    action: "add_item",
    packageName: options.packageName,
    ...given({ note: options.note })
  })).pipe(Command.withDescription(`Add a package at the end of a collection. ${idempotencyNote}`))

const remove = Command.make("remove", { ...collectionOptions, packageName: collectionPackage }, (options) =>
  sendCollectionCommand(options, { action: "remove_item", packageName: options.packageName })).pipe(
    Command.withDescription(`Remove a package from a collection. ${idempotencyNote}`)
  )

const reorder = Command.make("reorder", {
  ...collectionOptions,
  packageNames: collectionPackage.pipe(Args.atLeast(1))
}, (options) => sendCollectionCommand(options, { action: "reorder", packageNames: options.packageNames })).pipe(
  Command.withDescription(`Put a collection's packages in the given order (every item, once). ${idempotencyNote}`)
)

const collection = Command.make("collection").pipe(
  Command.withDescription("Curator commands on editorial collections (scope packages:curate)"),
  Command.withSubcommands([collectionShow, create, update, add, remove, reorder])
)

export const market = Command.make("market").pipe(
  Command.withDescription(
    "Use a marketplace's API. Every command takes --url, --token and --json; " +
      "each value comes from the flag, else CLARK_MARKETPLACE_URL / CLARK_MARKETPLACE_TOKEN, " +
      "else the config file (CLARK_CONFIG, else $XDG_CONFIG_HOME/clark/config.json, else ~/.config/clark/config.json: " +
      `{"marketplace": {"url": …, "token": …}}), else ${defaultMarketplaceUrl} for the URL`
  ),
  Command.withSubcommands([search, show, install, me, curate, collection])
)
