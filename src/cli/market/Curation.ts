/**
 * `clark market curate …` and `clark market collection …`: the curator's
 * commands (scope packages:curate). Every one sends an idempotency key.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Effect, Schema } from "effect"
import { CollectionCommand } from "../../../schema/marketplace/Catalog.js"
import { CurationStatus } from "../../../schema/marketplace/Package.js"
import type { MarketClient } from "./Client.js"
import * as Render from "./Render.js"
import { connectionOptions } from "./Settings.js"
import { given, idempotencyHeaders, idempotencyKey, optionalText, packageName, type PostOptions, request } from "./Shared.js"

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
  )).pipe(Command.withDescription("Set a package's curation status"))

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
  )).pipe(Command.withDescription("Feature a package, or with --off return it to listed"))

export const curate = Command.make("curate").pipe(
  Command.withDescription("Curator commands on packages (scope packages:curate)"),
  Command.withSubcommands([status, feature])
)


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
  )).pipe(Command.withDescription("Show a collection as curators see it. Unpublished state and every item included."))

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
  })).pipe(Command.withDescription("Create a collection"))

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
  })).pipe(Command.withDescription("Update a collection. Its title, description, publication or position."))

const add = Command.make("add", {
  ...collectionOptions,
  packageName: collectionPackage,
  note: optionalText("note", "up to 300 characters")
}, (options) =>
  sendCollectionCommand(options, {
    action: "add_item",
    packageName: options.packageName,
    ...given({ note: options.note })
  })).pipe(Command.withDescription("Add a package at the end of a collection"))

const remove = Command.make("remove", { ...collectionOptions, packageName: collectionPackage }, (options) =>
  sendCollectionCommand(options, { action: "remove_item", packageName: options.packageName })).pipe(
    Command.withDescription("Remove a package from a collection")
  )

const reorder = Command.make("reorder", {
  ...collectionOptions,
  packageNames: collectionPackage.pipe(Args.atLeast(1))
}, (options) => sendCollectionCommand(options, { action: "reorder", packageNames: options.packageNames })).pipe(
  Command.withDescription("Put a collection's packages in the given order. Name every item once.")
)

export const collection = Command.make("collection").pipe(
  Command.withDescription("Curator commands on editorial collections (scope packages:curate)"),
  Command.withSubcommands([collectionShow, create, update, add, remove, reorder])
)

