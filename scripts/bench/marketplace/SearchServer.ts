/**
 * The marketplace API with a chosen PackageStore, for the benchmark's before/after search runs:
 * `--store before` searches with today's SQL kept in LegacyPackageStore.ts, `--store after` with the product's
 * store, `--store walk` with the product's store as it searched a 3-letter word before the prefix table
 * (migration 0009): every word starting with it walked through the search table. Both run here, under the same loader and settings (MARKETPLACE_READ_CACHE=off from the driver), so the
 * two differ in their search SQL only.
 *
 *   node --import tsx scripts/bench/marketplace/SearchServer.ts --store before --database URL --port N
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlPackageStore from "../../../layers/marketplace/sql/SqlPackageStore.js"
import { HandlersLive, serveApi, ServicesLive, SettingsLive } from "../../../src/marketplace/Server.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"
import * as LegacyPackageStore from "./LegacyPackageStore.js"

const argument = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  const value = i === -1 ? undefined : process.argv[i + 1]
  if (value === undefined) throw new Error(`--${name} is required`)
  return value
}

const chosen = argument("store")
const store = chosen === "before"
  ? LegacyPackageStore.layer
  : chosen === "walk"
  ? Layer.effect(PackageStore, SqlPackageStore.makeWith({ prefixTable: false }))
  : SqlPackageStore.layer
const database = Database.parseDatabaseUrl(argument("database"))
if (database === undefined) throw new Error("--database is not a database URL")

// The chosen store is provided first, so the handlers use it; ServicesLive's own store goes unused.
const api = HandlersLive.pipe(
  Layer.provide(store),
  Layer.provide(ServicesLive),
  Layer.provide(SettingsLive),
  Layer.provide(Database.layer(database))
)

NodeRuntime.runMain(
  Layer.launch(serveApi(api).pipe(Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(argument("port")) }))))
)
