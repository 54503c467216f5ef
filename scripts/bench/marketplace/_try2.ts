import * as fs from "node:fs"
import { Effect, Layer } from "effect"
import * as Database from "../../../layers/marketplace/sql/Database.js"
import * as SqlCatalogImporter from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import { seedSynthetic } from "../../../src/marketplace/admin/Admin.js"
import { bulkSeed } from "./BulkSeed.js"
const n = Number(process.argv[2] ?? 20000)
const tx = Number(process.argv[3] ?? 100000)
for (const f of ["a.db", "a.db-wal", "a.db-shm", "b.db", "b.db-wal", "b.db-shm"]) fs.rmSync(`/tmp/mbench/${f}`, { force: true })
let t = Date.now()
const layer = SqlCatalogImporter.layer.pipe(Layer.provide(Database.layer(Database.parseDatabaseUrl("sqlite:/tmp/mbench/a.db")!)))
await Effect.runPromise(seedSynthetic(n).pipe(Effect.provide(layer)))
console.log("product", (Date.now() - t) / 1000)
t = Date.now()
await bulkSeed("sqlite:/tmp/mbench/b.db", n, { transactionSize: tx })
console.log("bulk", (Date.now() - t) / 1000)
