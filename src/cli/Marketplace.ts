/**
 * `clark marketplace …`: serve the marketplace and administer its database. The server, the SQL clients,
 * the importer and the seed data are imported when a command uses them (Lazy.ts).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import { Console, Effect, Layer, Option } from "effect"
import type { SqlClient } from "@effect/sql"
import * as Lazy from "./Lazy.js"
import { accountCommands } from "./MarketplaceAccounts.js"

const adminModule = () => import("../marketplace/admin/Admin.js")

const database = Options.text("database").pipe(
  Options.withDescription("sqlite:PATH or postgres://… (default: MARKETPLACE_DATABASE, else sqlite:./data/marketplace.db)"),
  Options.optional
)

/** `existing` for commands that need data already there: they refuse to create an empty database. */
const databaseLayer = (
  option: Option.Option<string>,
  need: "create" | "existing" = "create"
): Layer.Layer<SqlClient.SqlClient, Error> =>
  Lazy.layer(() => import("./marketplace/Database.js"), (Database) => Database.databaseLayer(option, need))

const importerLayer = Lazy.layer(
  () => import("../../layers/marketplace/sql/SqlCatalogImporter.js"),
  (SqlCatalogImporter) => SqlCatalogImporter.layer
)

const withImporter = (option: Option.Option<string>) =>
  Effect.provide(importerLayer.pipe(Layer.provideMerge(databaseLayer(option))))

const serve = Command.make("serve", {
  database,
  port: Options.integer("port").pipe(Options.withDescription("default: MARKETPLACE_PORT, else 8787"), Options.optional),
  host: Options.text("host").pipe(Options.withDescription("default: MARKETPLACE_HOST, else 127.0.0.1"), Options.optional),
  seedDemo: Options.boolean("seed-demo-if-empty").pipe(
    Options.withDescription("load the demo catalogue when the database holds no packages")
  )
}, (options) =>
  Effect.gen(function*() {
    const Server = yield* Effect.promise(() => import("../marketplace/Server.js"))
    const { checkListen, listenFailure } = yield* Effect.promise(() => import("../marketplace/http/Listening.js"))
    const listen = yield* Server.ListenConfig
    const host = Option.getOrElse(options.host, () => listen.host)
    const port = Option.getOrElse(options.port, () => listen.port)
    if (port !== 0) yield* checkListen(host, port)
    // Built once for the seed and the server.
    const db = yield* Layer.memoize(databaseLayer(options.database))
    if (options.seedDemo) {
      const seeded = yield* Lazy.load(adminModule, (Admin) => Admin.seedDemoIfEmpty).pipe(
        Effect.provide(importerLayer.pipe(Layer.provide(db)))
      )
      if (seeded) yield* Effect.logInfo("Seeded the demo catalogue")
    }
    yield* Layer.launch(Server.serve({ host, port }).pipe(Layer.provide(db))).pipe(
      // Node's own error (EADDRINUSE …) carries no message of ours: say what happened and what to do.
      Effect.catchTag("ServeError", (error) => Effect.fail(new Error(listenFailure(error.cause, host, port))))
    )
  }).pipe(Effect.scoped)).pipe(Command.withDescription("Serve the marketplace API"))

const migrate = Command.make("migrate", { database }, (options) =>
  Effect.gen(function*() {
    yield* Effect.provide(Effect.void, databaseLayer(options.database))
    yield* Console.log("Migrations applied")
  })).pipe(Command.withDescription("Create or upgrade the database schema"))

const seed = Command.make("seed", {
  database,
  demo: Options.boolean("demo").pipe(Options.withDescription("load the demo catalogue")),
  synthetic: Options.integer("synthetic").pipe(
    Options.withDescription("generate N synthetic packages (up to 1,000,000)"),
    Options.optional
  )
}, (options) =>
  Effect.gen(function*() {
    const Admin = yield* Effect.promise(adminModule)
    if (options.demo) {
      const counts = yield* Admin.seedDemo
      yield* Console.log(`Demo catalogue loaded: ${JSON.stringify(counts)}`)
    }
    if (Option.isSome(options.synthetic)) {
      const count = options.synthetic.value
      if (count < 1 || count > 1_000_000) return yield* Effect.fail(new Error("--synthetic must be 1 to 1,000,000"))
      // A CommonJS module: its exports are the default export, unbundled and bundled alike.
      const { SingleBar } = (yield* Effect.promise(() => import("cli-progress"))).default
      const bar = new SingleBar({ format: "synthetic packages [{bar}] {value}/{total} {eta_formatted} left" })
      bar.start(count, 0)
      const written = yield* Admin.seedSynthetic(count, (n) => Effect.sync(() => bar.update(n))).pipe(
        Effect.ensuring(Effect.sync(() => bar.stop()))
      )
      yield* Console.log(`${written} synthetic packages written`)
    }
    if (!options.demo && Option.isNone(options.synthetic)) {
      return yield* Effect.fail(new Error("say what to seed: --demo or --synthetic N"))
    }
  }).pipe(withImporter(options.database))).pipe(Command.withDescription("Load demo or synthetic data"))

const importDocumentFile = Args.file({ name: "FILE.json", exists: "yes" }).pipe(
  Args.withDescription("the import document: {categories, publishers, packages, collections, pages}")
)

const importFile = Command.make("import", { database, file: importDocumentFile }, (options) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(options.file)
    const input = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => new Error(`${options.file} is not JSON: ${(error as Error).message}`)
    })
    const counts = yield* Lazy.load(adminModule, (Admin) => Admin.importDocument(input)).pipe(
      Effect.catchTag("ImportRejected", (e) => Effect.fail(new Error(`Import refused at ${e.path}: ${e.message}`)))
    )
    yield* Console.log(`Imported: ${JSON.stringify(counts)}`)
  }).pipe(withImporter(options.database))).pipe(
    Command.withDescription("Load a catalogue from a JSON file, all or nothing. Categories, publishers, packages, collections and pages.")
  )

const admin = Command.make("admin").pipe(
  Command.withDescription("Administer the marketplace database directly"),
  Command.withSubcommands([migrate, seed, importFile, ...accountCommands(database, (option) => databaseLayer(option, "existing"))])
)

export const marketplace = Command.make("marketplace").pipe(
  Command.withDescription("The package marketplace service"),
  Command.withSubcommands([serve, admin])
)
