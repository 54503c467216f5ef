/** The marketplace server: the API, its handlers and stores, on a Node HTTP server. */
import { type HttpApi, HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { createServer } from "./http/ClientError.js"
import * as SqlCatalogStore from "../../layers/marketplace/sql/SqlCatalogStore.js"
import * as CachedPackageStore from "../../layers/marketplace/cache/CachedPackageStore.js"
import * as SqlAccounts from "../../layers/marketplace/sql/SqlAccounts.js"
import * as SqlCredentials from "../../layers/marketplace/sql/SqlCredentials.js"
import * as SqlCuration from "../../layers/marketplace/sql/SqlCuration.js"
import * as SqlAuditLog from "../../layers/marketplace/sql/SqlAuditLog.js"
import * as SqlCredentialManagement from "../../layers/marketplace/sql/SqlCredentialManagement.js"
import * as SqlPageEditor from "../../layers/marketplace/sql/SqlPageEditor.js"
import * as SqlDatabaseHealth from "../../layers/marketplace/sql/SqlDatabaseHealth.js"
import * as SqlIdempotency from "../../layers/marketplace/sql/SqlIdempotency.js"
import * as SqlPackageStore from "../../layers/marketplace/sql/SqlPackageStore.js"
import * as SqlCatalogVersion from "../../layers/marketplace/sql/SqlCatalogVersion.js"
import * as SqlPageStore from "../../layers/marketplace/sql/SqlPageStore.js"
import * as SqlRateLimits from "../../layers/marketplace/sql/SqlRateLimits.js"
import * as SqlSubmissions from "../../layers/marketplace/sql/SqlSubmissions.js"
import * as SqlPublishers from "../../layers/marketplace/sql/SqlPublishers.js"
import * as LivePublisherChecks from "../../layers/marketplace/publishers/PublisherChecks.js"
import { MarketplaceApi } from "../../schema/marketplace/Api.js"
import type { Authentication } from "../../schema/marketplace/Security.js"
import type { CatalogStore } from "../../services/marketplace/CatalogStore.js"
import type { AccountStore } from "../../services/marketplace/Accounts.js"
import type { Credentials } from "../../services/marketplace/Credentials.js"
import type { CurationStore } from "../../services/marketplace/Curation.js"
import type { AuditLog } from "../../services/marketplace/AuditLog.js"
import type { CredentialManagement } from "../../services/marketplace/CredentialManagement.js"
import type { PageEditor } from "../../services/marketplace/PageEditor.js"
import type { DatabaseHealth } from "../../services/marketplace/DatabaseHealth.js"
import type { Idempotency } from "../../services/marketplace/Idempotency.js"
import type { PackageStore } from "../../services/marketplace/PackageStore.js"
import type { PageStore } from "../../services/marketplace/PageStore.js"
import type { RateLimiter } from "@effect/experimental"
import type { ReplayCheck } from "../../services/marketplace/RateLimits.js"
import type { Submissions } from "../../services/marketplace/Submissions.js"
import type { Publishers } from "../../services/marketplace/Publishers.js"
import { AccountLive } from "./handlers/Account.js"
import { AdminLive, CredentialsLive } from "./handlers/Credentials.js"
import { PageAdminLive } from "./handlers/PageAdmin.js"
import { CurationLive } from "./handlers/Curation.js"
import { CatalogLive } from "./handlers/Catalog.js"
import { IndexLive } from "./handlers/Index.js"
import { PackagesLive, SearchLive } from "./handlers/Packages.js"
import { PagesLive } from "./handlers/Pages.js"
import { PublishLive } from "./handlers/Publish.js"
import { PublishersLive } from "./handlers/Publishers.js"
import { SystemLive } from "./handlers/System.js"
import { serveApi } from "../http/ServeApi.js"
import { AuthenticationLive } from "./http/Authentication.js"
import { ErrorEnvelopeLive } from "./http/ErrorEnvelope.js"
import * as Listening from "./http/Listening.js"
import { authenticateOnce, RateLimitingLive } from "./http/RateLimiting.js"
import * as Settings from "./Settings.js"

/** Package reads, behind the read cache unless MARKETPLACE_READ_CACHE=off. */
const PackageStoreLive = Layer.unwrapEffect(
  Effect.map(Settings.Settings, (settings) =>
    settings.readCache
      ? CachedPackageStore.layer(SqlPackageStore.make).pipe(Layer.provide(SqlCatalogVersion.layer))
      : SqlPackageStore.layer)
)

/** What the handlers need: settings, stores, credentials and the credential check. */
export type Services =
  | Settings.Settings
  | PackageStore
  | CatalogStore
  | PageStore
  | DatabaseHealth
  | Credentials
  | AccountStore
  | CurationStore
  | Idempotency
  | AuditLog
  | PageEditor
  | CredentialManagement
  | Authentication
  | Settings.RateLimits
  | RateLimiter.RateLimiter
  | ReplayCheck
  | Submissions
  | Publishers

export const ServicesLive: Layer.Layer<Services, never, SqlClient.SqlClient | Settings.Settings> = authenticateOnce(
  AuthenticationLive
)
  .pipe(
    Layer.provideMerge(Layer.mergeAll(
      PackageStoreLive,
      SqlCatalogStore.layer,
      SqlPageStore.layer,
      SqlDatabaseHealth.layer,
      SqlCredentials.layer,
      SqlAccounts.layer,
      SqlCuration.layer,
      SqlIdempotency.layer,
      Layer.mergeAll(
        SqlPageEditor.layer,
        SqlCredentialManagement.layer,
        SqlPublishers.layer.pipe(Layer.provide(LivePublisherChecks.layerFromConfig))
      ).pipe(Layer.provideMerge(SqlAuditLog.layer)),
      SqlSubmissions.layer,
      Layer.unwrapEffect(Effect.map(Settings.RateLimits, (limits) => SqlRateLimits.layer(limits.store)))
    )),
    Layer.provideMerge(Layer.service(Settings.Settings)),
    // Read here rather than with Settings, so a server or test that builds Settings itself still gets them.
    Layer.provideMerge(Layer.orDie(Settings.rateLimitsLayer))
  )

/** Settings from the environment; a bad value stops the server at start. */
export const SettingsLive = Listening.SettingsLive.pipe(Layer.orDie)

/** The API with every handler, over whatever services are provided. */
export const HandlersLive: Layer.Layer<HttpApi.Api, never, Services> = HttpApiBuilder.api(MarketplaceApi).pipe(
  Layer.provide([SystemLive, PackagesLive, SearchLive, CatalogLive, PagesLive, AccountLive, CurationLive, PublishLive, IndexLive]),
  Layer.provide([PageAdminLive, CredentialsLive, AdminLive, PublishersLive]),
  // Built after the envelope, so the rate limiter wraps it: a refusal never reaches the API.
  Layer.provide(RateLimitingLive.pipe(Layer.provide(ErrorEnvelopeLive)))
)

/** The API over the SQL services; needs a database. */
export const ApiLive: Layer.Layer<HttpApi.Api, never, SqlClient.SqlClient> = HandlersLive.pipe(
  Layer.provide(ServicesLive),
  Layer.provide(SettingsLive)
)

export { serveApi } from "../http/ServeApi.js"

export interface ListenOptions {
  readonly host: string
  readonly port: number
}

export const ListenConfig = Settings.ListenConfig

/**
 * This replica's indexer workers and re-check (MARKETPLACE_INDEXER_*), over the same database. Loaded with
 * the server only: commands that only read never start workers.
 */
export const IndexerLive: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.promise(() => import("../../layers/marketplace/indexer/Live.js")).pipe(Effect.map((Live) => Live.workersFromConfig))
)

export const serve = (listen: ListenOptions) =>
  serveApi(ApiLive, { announce: Listening.announce }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, listen)),
    Layer.merge(IndexerLive)
  )
