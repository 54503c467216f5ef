/** The indexer over SQL stores and Node's HTTP client: the server's workers, the CLI's and the tests' indexer. */
import { NodeHttpClient } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { Indexer } from "../../../services/marketplace/Indexer.js"
import * as SqlCatalogImporter from "../sql/SqlCatalogImporter.js"
import * as SqlIndexedCatalog from "../sql/SqlIndexedCatalog.js"
import * as SqlIndexQueue from "../sql/SqlIndexQueue.js"
import { IndexerConfig, type IndexerOptions, layer, layerWorkers } from "./RegistryIndexer.js"

const stores = Layer.mergeAll(
  SqlIndexQueue.layer,
  SqlIndexedCatalog.layer.pipe(Layer.provide(SqlCatalogImporter.layer)),
  NodeHttpClient.layerUndici
)

/** The indexer without workers (drain, re-check, one job at a time). */
export const indexer = (options: IndexerOptions): Layer.Layer<Indexer, never, SqlClient.SqlClient> =>
  layer(options).pipe(Layer.provide(stores))

/** The indexer with `options.workers` workers and the re-check running. */
export const workers = (options: IndexerOptions): Layer.Layer<Indexer, never, SqlClient.SqlClient> =>
  layerWorkers(options).pipe(Layer.provide(stores))

export const workersFromConfig: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.unwrapEffect(
  Effect.map(Effect.orDie(IndexerConfig), (options) => Layer.discard(workers(options)))
)
