/**
 * A real marketplace HTTP server on a loopback port, over a real database,
 * loaded with an import document; plus a typed client and raw fetch helpers.
 */
import { FetchHttpClient, HttpApiClient, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "../../src/marketplace/http/ClientError.js"
import * as Database from "../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../layers/marketplace/sql/SqlCatalogImporter.js"
import { MarketplaceApi } from "../../schema/marketplace/Api.js"
import { importDocument } from "../../src/marketplace/admin/Admin.js"
import { HandlersLive, serveApi, type Services, ServicesLive } from "../../src/marketplace/Server.js"
import { defaultRateLimits } from "../../services/marketplace/RateLimits.js"
import { RateLimits, Settings, type SettingsShape } from "../../src/marketplace/Settings.js"
import { makeDatabase, type TestDatabase } from "./Databases.js"

export interface RunningMarketplace {
  readonly database: TestDatabase
  readonly baseUrl: string
  /** GET/POST a path under the base URL and return status, headers and the parsed body. */
  readonly request: (
    path: string,
    init?: RequestInit
  ) => Promise<{ readonly status: number; readonly headers: Headers; readonly body: any; readonly text: string }>
  /** Runs an effect with the typed client derived from the contract. */
  readonly client: <A, E>(use: (client: MarketplaceClient) => Effect.Effect<A, E>) => Promise<A>
  /** Runs an effect on the server's database, e.g. to check what was or was not stored. */
  readonly query: <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>
  readonly close: () => Promise<void>
}

const makeClient = (baseUrl: string) => HttpApiClient.make(MarketplaceApi, { baseUrl })
export type MarketplaceClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

export interface StartOptions {
  /** Replaces some services, e.g. to make a store fail; the database is still real. */
  readonly services?: (live: typeof ServicesLive) => Layer.Layer<Services, never, SqlClient.SqlClient | Settings>
  /** Runs with the server's services and database before the server starts serving (users, tokens, ...). */
  readonly setup?: Effect.Effect<unknown, unknown, Services | SqlClient.SqlClient>
  /** Replaces some settings; origins default to `testOrigin`. */
  readonly settings?: Partial<SettingsShape>
}

/** The public and site origin of test servers unless a test says otherwise. */
export const testOrigin = "https://market.test"

export const startMarketplace = async (
  dialect: "sqlite" | "postgres",
  document: unknown,
  options: StartOptions = {}
): Promise<RunningMarketplace> => {
  // Migrated already (a copy of a template): the server's own migration run then finds nothing to do.
  const database = await makeDatabase(dialect, { migrated: true })
  const db = Database.layer(database.parsed)
  // Limits on, far above what a suite sends, so no suite trips them unless it sets its own (`services`).
  const live = Layer.merge(ServicesLive, Layer.succeed(RateLimits, { ...defaultRateLimits, publicLimit: 1e6, authenticatedLimit: 1e6 }))
  const services = options.services === undefined ? live : options.services(live)
  const prepared = options.setup === undefined
    ? services
    : Layer.effectDiscard(Effect.orDie(options.setup)).pipe(Layer.provideMerge(services))
  const settings = Layer.succeed(Settings, {
    environment: "development",
    publicOrigin: testOrigin,
    siteOrigin: testOrigin,
    readCache: true,
    ...options.settings
  })
  const api = HandlersLive.pipe(Layer.provide(prepared), Layer.provide(settings))
  const runtime = ManagedRuntime.make(
    serveApi(api).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provideMerge(SqlCatalogImporter.layer),
      Layer.provideMerge(db)
    )
  )
  await runtime.runPromise(importDocument(document))
  const baseUrl = await runtime.runPromise(HttpServer.addressFormattedWith((address) => Effect.succeed(address)))
  const request: RunningMarketplace["request"] = async (path, init) => {
    const response = await fetch(`${baseUrl}${path}`, init)
    const text = await response.text()
    let body: unknown = undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, body, text }
  }
  const client: RunningMarketplace["client"] = (use) =>
    Effect.runPromise(
      makeClient(baseUrl).pipe(
        Effect.flatMap(use),
        Effect.provide(FetchHttpClient.layer)
      )
    )
  return {
    database,
    baseUrl,
    request,
    client,
    query: (effect) => runtime.runPromise(effect),
    close: async () => {
      await runtime.dispose()
      await database.drop()
    }
  }
}
