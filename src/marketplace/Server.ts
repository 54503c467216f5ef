/** The marketplace server: the API, its handlers and stores, on a Node HTTP server. */
import { type HttpApi, HttpApiBuilder, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Config, Layer } from "effect"
import { createServer } from "node:http"
import * as SqlCatalogStore from "../../layers/marketplace/sql/SqlCatalogStore.js"
import * as SqlDatabaseHealth from "../../layers/marketplace/sql/SqlDatabaseHealth.js"
import * as SqlPackageStore from "../../layers/marketplace/sql/SqlPackageStore.js"
import * as SqlPageStore from "../../layers/marketplace/sql/SqlPageStore.js"
import { MarketplaceApi } from "../../schema/marketplace/Api.js"
import { AccountLive, AuthenticationLive, CurationLive } from "./handlers/Account.js"
import { CatalogLive } from "./handlers/Catalog.js"
import { PackagesLive, SearchLive } from "./handlers/Packages.js"
import { PagesLive } from "./handlers/Pages.js"
import { SystemLive } from "./handlers/System.js"
import { ErrorEnvelopeLive } from "./http/ErrorEnvelope.js"
import * as Settings from "./Settings.js"

export const StoresLive = Layer.mergeAll(
  SqlPackageStore.layer,
  SqlCatalogStore.layer,
  SqlPageStore.layer,
  SqlDatabaseHealth.layer
)

/** The API with every handler; needs a database. */
export const ApiLive: Layer.Layer<HttpApi.Api, never, SqlClient.SqlClient> = HttpApiBuilder.api(MarketplaceApi).pipe(
  Layer.provide([SystemLive, PackagesLive, SearchLive, CatalogLive, PagesLive, AccountLive, CurationLive]),
  Layer.provide([StoresLive, AuthenticationLive, Settings.layer.pipe(Layer.orDie)]),
  Layer.provide(ErrorEnvelopeLive)
)

export interface ListenOptions {
  readonly host: string
  readonly port: number
}

export const ListenConfig = Config.all({
  host: Config.string("MARKETPLACE_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("MARKETPLACE_PORT").pipe(Config.withDefault(8787))
})

/** Serves the API; per-request tracing is off because nothing exports spans and it costs 10-25 % throughput. */
export const serve = (listen: ListenOptions) =>
  HttpApiBuilder.serve().pipe(
    HttpServer.withLogAddress,
    Layer.provide(ApiLive),
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(NodeHttpServer.layer(createServer, listen))
  )
