/** The node server: its API over the data dir's database, identity and model. */
import { type HttpApi, HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Effect, Layer, type Redacted } from "effect"
import * as path from "node:path"
import * as Identity from "../../layers/node/fs/Identity.js"
import * as FsPackageFolders from "../../layers/node/fs/FsPackageFolders.js"
import * as FileSecretBroker from "../../layers/node/fs/SecretBroker.js"
import * as Directory from "../../layers/node/packages/Directory.js"
import * as ListingCacheLive from "../../layers/node/packages/ListingCache.js"
import * as InstallerLive from "../../layers/node/packages/Installer.js"
import * as PackageToolsLive from "../../layers/node/packages/PackageTools.js"
import * as WidgetPlacementLive from "../../layers/node/widgets/Placement.js"
import * as OfferedActionsLive from "../../layers/node/widgets/OfferedActions.js"
import * as JobApprovalsLive from "../../layers/node/jobs/JobApprovals.js"
import * as WidgetPressesLive from "../../layers/node/widgets/Presses.js"
import * as WidgetViewsLive from "../../layers/node/widgets/Views.js"
import * as MachineFileWritesLive from "../../layers/node/widgets/MachineFileWrites.js"
import * as SqlWidgetPressLog from "../../layers/node/sql/SqlWidgetPressLog.js"
import * as SqlLedger from "../../layers/node/ledger/SqlLedger.js"
import * as PackageCredentialsLive from "../../layers/node/packages/PackageCredentials.js"
import * as SqlConnections from "../../layers/node/sql/SqlConnections.js"
import * as SqlPackageRecords from "../../layers/node/sql/SqlPackageRecords.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import * as SqlActivity from "../../layers/node/sql/SqlActivity.js"
import * as SqlArtifactStore from "../../layers/node/sql/SqlArtifactStore.js"
import * as SqlAuditLog from "../../layers/node/sql/SqlAuditLog.js"
import * as SqlConversationStore from "../../layers/node/sql/SqlConversationStore.js"
import * as SqlPreferenceStore from "../../layers/node/sql/SqlPreferenceStore.js"
import * as SqlTaskApprovals from "../../layers/node/sql/SqlTaskApprovals.js"
import * as SqlTransactions from "../../layers/node/sql/SqlTransactions.js"
import * as SqlWidgetInstances from "../../layers/node/sql/SqlWidgetInstances.js"
import * as TurnEngineLive from "../../layers/node/TurnEngine.js"
import * as BackgroundWorkLive from "../../layers/node/BackgroundWork.js"
import * as InboxLayer from "../../layers/node/Inbox.js"
import * as ConversationActivityLive from "../../layers/node/ConversationActivity.js"
import * as ComposerLayer from "../../layers/node/Composer.js"
import * as SqlDeletions from "../../layers/node/sql/SqlDeletions.js"
import * as JobsLive from "../../layers/node/jobs/Jobs.js"
import * as JobWork from "../../layers/node/jobs/JobWork.js"
import * as AudioPlayerLive from "../../layers/node/media/AudioPlayer.js"
import { NodeApi } from "../../schema/node/Api.js"
import { MapTiles } from "../../services/node/MapTiles.js"
import { MediaFetcher } from "../../services/node/MediaFetcher.js"
import type { ModelProvider } from "../../services/node/ModelProvider.js"
import type { EngineVersions } from "../../services/node/Notices.js"
import type { PreferenceStore } from "../../services/node/PreferenceStore.js"
import type { SecretBroker } from "../../services/node/SecretBroker.js"
import { MarketplaceCatalog } from "../../services/node/MarketplaceCatalog.js"
import { RegistryPackages } from "../../services/node/RegistryPackages.js"
import { ServiceRuntime } from "../../services/node/ServiceRuntime.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"
import { serveApi, tracedAsConfigured } from "../http/ServeApi.js"
import { ArtifactsLive } from "./handlers/Artifacts.js"
import { WidgetArtifactsLive } from "./handlers/WidgetArtifacts.js"
import { ConversationsLive, HostControlLive, QuestionsLive } from "./handlers/Conversations.js"
import { AppIntentsLive } from "./handlers/AppIntents.js"
import { ComposerLive } from "./handlers/Composer.js"
import { DeletionLive } from "./handlers/Deletion.js"
import { MapsLive } from "./handlers/Maps.js"
import { PackagesLive } from "./handlers/Packages.js"
import { PendingGroupsLive } from "./handlers/Pending.js"
import { PreferencesLive } from "./handlers/Preferences.js"
import { PublicLive } from "./handlers/Public.js"
import { WidgetsLive } from "./handlers/Widgets.js"
import { OfferedActionsLive as OfferedActionsHandlers } from "./handlers/OfferedActions.js"
import { WorkLive } from "./handlers/Work.js"
import { InboxLive } from "./handlers/Inbox.js"
import { AuthenticationLive, PersonOnlyLive } from "./http/Authentication.js"
import { createServer } from "./http/ClientError.js"
import { ErrorMappingLive } from "./http/ErrorMapping.js"
import { onFirstUse } from "./OnFirstUse.js"

export interface NodeOptions {
  readonly dataDir: string
  readonly appSecret: Redacted.Redacted<string>
  readonly model: Layer.Layer<ModelProvider>
  readonly turns?: TurnEngineLive.TurnSettings | undefined
  /**
   * The marketplace the directory lists (its origin); `undefined` reads CC_MARKETPLACE_URL, `null` lists
   * local folders only.
   */
  readonly marketplaceUrl?: string | null | undefined
  /** The npm registry of marketplace packages; `undefined` reads CC_REGISTRY_URL, `null` has none. */
  readonly registryUrl?: string | null | undefined
  /** Service packages' processes; `undefined` builds the MCP runtime from CC_SERVICE_* settings. */
  readonly serviceRuntime?: Layer.Layer<ServiceRuntime> | undefined
  /**
   * The engine the host application runs and the newest it knows (engine-update notices); `undefined` reads
   * CC_ENGINE_VERSION and CC_ENGINE_NEWEST, `null` knows none.
   */
  readonly engine?: EngineVersions | null | undefined
  /** The tile fetcher; tests replace it to see how the node answers each of its outcomes. */
  readonly mapTiles?: Layer.Layer<MapTiles, never, SecretBroker | PreferenceStore> | undefined
}

/** Identity, database, audit, stores, effect ledger, secrets, tiles, media, model and turn engine of a data dir. */
export const ServicesLive = (options: NodeOptions) => {
  const database = NodeDatabase.layer(options.dataDir)
  const stores = Layer.mergeAll(
    SqlConversationStore.layer,
    SqlAuditLog.layer,
    SqlPreferenceStore.layer,
    SqlTransactions.layer,
    SqlArtifactStore.layer({ dataDir: options.dataDir }),
    SqlPackageRecords.layer,
    SqlTaskApprovals.layer,
    SqlWidgetInstances.layer,
    SqlWidgetPressLog.layer,
    // Its own file with synchronous commits; the main database only for the notices of unknown effects.
    SqlLedger.layer(options.dataDir)
  ).pipe(Layer.provideMerge(database))
  const secrets = FileSecretBroker.layer(options.dataDir)
  // The same `stores` and `secrets` values below: layers are shared by reference, so one database, one broker.
  // Tiles and media are built by the first request that uses them (OnFirstUse.ts).
  const tiles = onFirstUse(
    MapTiles,
    () =>
      options.mapTiles !== undefined
        ? Promise.resolve(options.mapTiles)
        : import("../../layers/node/tiles/MapTiles.js").then((NodeMapTiles) => NodeMapTiles.layer),
    (service) => MapTiles.of({ tile: (z, x, y) => Effect.flatMap(service, (tiles) => tiles.tile(z, x, y)) })
  ).pipe(Layer.provide(Layer.merge(stores, secrets)))
  // Used when the audio player is placed; it stores what it fetched as a conversation artifact.
  const media = onFirstUse(
    MediaFetcher,
    () =>
      Promise.all([import("../../layers/node/media/MediaFetcher.js"), import("../../layers/node/media/Resolver.js")])
        .then(([NodeMediaFetcher, MediaResolver]) =>
          NodeMediaFetcher.layerConfig().pipe(Layer.provide(MediaResolver.layerSystem))
        ),
    (service) => MediaFetcher.of({ fetchAudio: (input) => Effect.flatMap(service, (media) => media.fetchAudio(input)) })
  ).pipe(Layer.provide(stores))
  const base = Layer.mergeAll(
    stores,
    secrets,
    tiles,
    media,
    Identity.layer(options.dataDir, options.appSecret),
    options.model
  )
  const engine = options.turns === undefined ? TurnEngineLive.layerConfig : TurnEngineLive.layer(options.turns)
  // The marketplace's contract and client are loaded by the first directory read that asks it.
  const catalog = onFirstUse(
    MarketplaceCatalog,
    () =>
      import("../../layers/node/marketplace/HttpMarketplaceCatalog.js").then((HttpMarketplaceCatalog) =>
        options.marketplaceUrl === undefined
          ? HttpMarketplaceCatalog.layerConfig
          : HttpMarketplaceCatalog.layer(options.marketplaceUrl ?? undefined)
      ),
    (service) =>
      MarketplaceCatalog.of({
        search: (q) => Effect.flatMap(service, (catalog) => catalog.search(q)),
        detail: (name) => Effect.flatMap(service, (catalog) => catalog.detail(name))
      })
  )
  // The package cache lives beside the database: one folder per content digest.
  // Registry packages (tar, Sigstore) are loaded by the first install that needs them.
  const registry = onFirstUse(
    RegistryPackages,
    () =>
      import("../../layers/registry/HttpRegistryPackages.js").then((HttpRegistryPackages) =>
        (options.registryUrl === undefined
          ? HttpRegistryPackages.layerNode({ tufCachePath: path.join(options.dataDir, "sigstore-tuf") })
          : HttpRegistryPackages.layerNodeWith(options.registryUrl, {
            tufCachePath: path.join(options.dataDir, "sigstore-tuf")
          })).pipe(Layer.orDie)
      ),
    (service) => RegistryPackages.of({ unpack: (request) => Effect.flatMap(service, (registry) => registry.unpack(request)) })
  )
  const packages = InstallerLive.layer({ stagingDir: path.join(options.dataDir, "packages-staging") }).pipe(
    // The directory everyone asks, feeding the inbox's cache of its answers (docs/decisions.md).
    Layer.provideMerge(ListingCacheLive.layer().pipe(Layer.provide(Directory.layer))),
    Layer.provideMerge(
      Layer.mergeAll(FsPackageFolders.layer({ cacheDir: path.join(options.dataDir, "packages") }), catalog, registry)
    ),
    Layer.provide(stores)
  )
  // Package credentials in the broker, and the connection states beside the other rows in the database.
  const credentials = SqlConnections.layer.pipe(
    Layer.provideMerge(PackageCredentialsLive.layer),
    Layer.provide(Layer.merge(stores, secrets))
  )
  // Service packages run as MCP processes, each given its own credentials; the SDK is loaded by the first tool
  // call that needs a service.
  const runtime = onFirstUse(
    ServiceRuntime,
    () =>
      options.serviceRuntime !== undefined
        ? Promise.resolve(options.serviceRuntime)
        : import("../../layers/node/services/McpServiceRuntime.js").then((McpServiceRuntime) =>
          Layer.unwrapEffect(Effect.gen(function*() {
            const settings = yield* Effect.orDie(McpServiceRuntime.SettingsConfig)
            const grants = yield* PackageCredentialsLive.runtimeGrants
            return McpServiceRuntime.layer({ ...settings, grants, dataDir: path.join(options.dataDir, "package-data") })
          }))
        ),
    (service) =>
      ServiceRuntime.of({
        tools: (pkg) => Effect.flatMap(service, (runtime) => runtime.tools(pkg)),
        call: (pkg, call) => Effect.flatMap(service, (runtime) => runtime.call(pkg, call)),
        reach: (pkg, use) => Effect.flatMap(service, (runtime) => runtime.reach(pkg, use)),
        stop: (packageId) => Effect.flatMap(service, (runtime) => runtime.stop(packageId)),
        stopAll: Effect.flatMap(service, (runtime) => runtime.stopAll),
        running: Effect.flatMap(service, (runtime) => runtime.running)
      })
  ).pipe(Layer.provide(credentials))
  // Placing the audio player fetches its source through the media fetcher (in `base`).
  const tools = Layer.mergeAll(PackageToolsLive.layer(), SqlActivity.layer, WidgetPlacementLive.layer, OfferedActionsLive.layer).pipe(
    Layer.provideMerge(AudioPlayerLive.layer),
    Layer.provideMerge(runtime),
    Layer.provide(stores)
  )
  // The composer's suggestions and the references a message carries, checked by the engine on arrival.
  const composer = ComposerLayer.layer()
  const core = Layer.mergeAll(engine.pipe(Layer.provideMerge(composer)), packages, credentials).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(base)
  )
  // The inbox acts through the engine, background work and the installer.
  const inbox = InboxLayer.layer(options.engine).pipe(Layer.provideMerge(BackgroundWorkLive.layer), Layer.provide(core))
  // Package jobs tell the inbox when they end; GET /work and its cancel reach them through JobWork's wrappers
  // (their Activity and BackgroundWork come last below, so they are the ones the handlers get).
  const jobs = JobWork.layer.pipe(Layer.provideMerge(JobsLive.layer)).pipe(
    Layer.provideMerge(inbox),
    Layer.provide(core)
  )
  // Conversation deletion asks what still runs there (ConversationActivity: turns, questions, approvals, effects,
  // jobs and widget presses).
  const deletions = SqlDeletions.layer({ dataDir: options.dataDir }).pipe(
    Layer.provide(ConversationActivityLive.layer()),
    Layer.provide(jobs),
    Layer.provide(core)
  )
  // Presses start turns, call package tools and start jobs: built on the same engine and tools as everything else.
  // Machine-surface file writes: their cards are task approvals, their policy the person's. A job press the
  // execution policy asks about waits for its card (JobApprovals), which the decide route settles.
  const widgets = Layer.mergeAll(WidgetPressesLive.layer, WidgetViewsLive.layer, MachineFileWritesLive.layer).pipe(
    Layer.provideMerge(JobApprovalsLive.layer),
    Layer.provide(jobs),
    Layer.provide(core)
  )
  return Layer.mergeAll(core, deletions, widgets, jobs)
}

export const ApiLive = (
  options: NodeOptions,
  services: ReturnType<typeof ServicesLive> = ServicesLive(options)
): Layer.Layer<HttpApi.Api> =>
  HttpApiBuilder.api(NodeApi).pipe(
    Layer.provide([
      PublicLive,
      ConversationsLive,
      QuestionsLive,
      HostControlLive,
      MapsLive,
      PreferencesLive,
      PackagesLive,
      WorkLive,
      ArtifactsLive,
      WidgetArtifactsLive,
      InboxLive,
      DeletionLive,
      AppIntentsLive,
      WidgetsLive,
      OfferedActionsHandlers,
      ComposerLive,
      PendingGroupsLive
    ]),
    Layer.provide([AuthenticationLive, PersonOnlyLive]),
    Layer.provide(ErrorMappingLive),
    Layer.provide(services)
  )

export const ListenConfig = Config.all({
  host: Config.string("CC_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("CC_PORT").pipe(Config.withDefault(8788))
})

/**
 * The API (database, identity, services) is built before the port opens: the
 * server listens as soon as its layer is built but installs its handler only
 * when `serve` runs, and a request arriving in between would wait forever. The
 * same `api` value is one instance in one build (layers are shared by reference).
 */
export const serve = (options: NodeOptions & { readonly host: string; readonly port: number }) => {
  const services = tracedAsConfigured(ServicesLive(options))
  const api = ApiLive(options, services)
  const listening = NodeHttpServer.layer(createServer, { host: options.host, port: options.port }).pipe(
    Layer.provide(api)
  )
  return drainTurns.pipe(Layer.provide(Layer.merge(serveApi(api).pipe(Layer.provide(listening)), services)))
}

/**
 * Message rule 6 at shutdown, before the server closes: Node's `server.close` waits for every open connection,
 * and an SSE stream stays open until its turn ends. Built last, so released first: running turns are stopped
 * (text kept, labelled stopped), waiting messages cancelled and every stream ended with its `done`; then the
 * server stops and the database closes.
 */
const drainTurns = Layer.scopedDiscard(
  Effect.flatMap(TurnEngine, (engine) => Effect.addFinalizer(() => engine.shutdown))
)
