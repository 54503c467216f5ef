import * as fs from "node:fs"
import { bulkSeed } from "./BulkSeed.js"
const n = Number(process.argv[2] ?? 20000)
for (const f of ["b.db", "b.db-wal", "b.db-shm"]) fs.rmSync(`/tmp/mbench/${f}`, { force: true })
const t = Date.now()
await bulkSeed("sqlite:/tmp/mbench/b.db", n, {})
console.log("bulk", (Date.now() - t) / 1000, process.cpuUsage())
