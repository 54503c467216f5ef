/**
 * The modules a benchmark builds a node from: this checkout's, or a baseline commit's (BENCH_BASELINE_REF, checked
 * out by `checkoutBaseline` in builds.ts) loaded through tsx from its worktree into the same process. The baseline
 * gets a module graph of its own (its own services, schemas and tags) on the same dependencies, so before and after
 * run side by side under the same load.
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as NoModel from "../../../layers/node/model/NoModel.js"
import * as Scripted from "../../../layers/node/model/Scripted.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { serveApi } from "../../../src/http/ServeApi.js"
import { createServer } from "../../../src/node/http/ClientError.js"
import { ApiLive, ServicesLive } from "../../../src/node/Server.js"

export interface NodeModules {
  readonly ServicesLive: typeof ServicesLive
  readonly ApiLive: typeof ApiLive
  readonly serveApi: typeof serveApi
  readonly createServer: typeof createServer
  readonly Scripted: typeof Scripted
  readonly NoModel: typeof NoModel
  readonly NodeDatabase: typeof NodeDatabase
  readonly SqlWidgetInstances: typeof SqlWidgetInstances
  readonly WidgetInstances: typeof WidgetInstances
}

export const currentModules: NodeModules = {
  ServicesLive,
  ApiLive,
  serveApi,
  createServer,
  Scripted,
  NoModel,
  NodeDatabase,
  SqlWidgetInstances,
  WidgetInstances
}

/** The same modules of the checkout in `dir`. */
export const loadModules = async (dir: string): Promise<NodeModules> => {
  const load = (file: string) => import(pathToFileURL(path.join(dir, file)).href)
  const [server, serve, clientError, scripted, noModel, database, sqlWidgets, widgets] = await Promise.all([
    load("src/node/Server.ts"),
    load("src/http/ServeApi.ts"),
    load("src/node/http/ClientError.ts"),
    load("layers/node/model/Scripted.ts"),
    load("layers/node/model/NoModel.ts"),
    load("layers/node/sql/NodeDatabase.ts"),
    load("layers/node/sql/SqlWidgetInstances.ts"),
    load("services/node/WidgetInstances.ts")
  ])
  return {
    ServicesLive: server.ServicesLive,
    ApiLive: server.ApiLive,
    serveApi: serve.serveApi,
    createServer: clientError.createServer,
    Scripted: scripted,
    NoModel: noModel,
    NodeDatabase: database,
    SqlWidgetInstances: sqlWidgets,
    WidgetInstances: widgets.WidgetInstances
  }
}
