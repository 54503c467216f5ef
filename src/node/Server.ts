/** The node server: its API over the data dir's database, identity and model. */
import { type HttpApi, HttpApiBuilder } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Layer, type Redacted } from "effect"
import { createServer } from "node:http"
import * as Identity from "../../layers/node/fs/Identity.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import * as SqlAuditLog from "../../layers/node/sql/SqlAuditLog.js"
import * as SqlConversationStore from "../../layers/node/sql/SqlConversationStore.js"
import * as TurnSupervisor from "../../layers/node/TurnSupervisor.js"
import { NodeApi } from "../../schema/node/Api.js"
import type { ModelProvider } from "../../services/node/ModelProvider.js"
import { serveApi } from "../http/ServeApi.js"
import { ConversationsLive, HostControlLive, QuestionsLive } from "./handlers/Conversations.js"
import { PendingGroupsLive } from "./handlers/Pending.js"
import { PublicLive } from "./handlers/Public.js"
import { AuthenticationLive, PersonOnlyLive } from "./http/Authentication.js"
import { ErrorMappingLive } from "./http/ErrorMapping.js"

export interface NodeOptions {
  readonly dataDir: string
  readonly appSecret: Redacted.Redacted<string>
  readonly model: Layer.Layer<ModelProvider>
  readonly turns?: TurnSupervisor.TurnSettings | undefined
}

/** Identity, database, audit, store, model and turn engine of a data dir. */
export const ServicesLive = (options: NodeOptions) => {
  const database = NodeDatabase.layer(options.dataDir)
  const stores = Layer.mergeAll(SqlConversationStore.layer, SqlAuditLog.layer).pipe(Layer.provideMerge(database))
  const base = Layer.mergeAll(stores, Identity.layer(options.dataDir, options.appSecret), options.model)
  const engine = options.turns === undefined ? TurnSupervisor.layerConfig : TurnSupervisor.layer(options.turns)
  return engine.pipe(Layer.provideMerge(base))
}

export const ApiLive = (options: NodeOptions): Layer.Layer<HttpApi.Api> =>
  HttpApiBuilder.api(NodeApi).pipe(
    Layer.provide([PublicLive, ConversationsLive, QuestionsLive, HostControlLive, PendingGroupsLive]),
    Layer.provide([AuthenticationLive, PersonOnlyLive]),
    Layer.provide(ErrorMappingLive),
    Layer.provide(ServicesLive(options))
  )

export const ListenConfig = Config.all({
  host: Config.string("CC_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("CC_PORT").pipe(Config.withDefault(8788))
})

export const serve = (options: NodeOptions & { readonly host: string; readonly port: number }) =>
  serveApi(ApiLive(options)).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { host: options.host, port: options.port }))
  )
