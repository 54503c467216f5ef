import pg from "pg"
import * as fs from "node:fs"
import { bulkSeed } from "./BulkSeed.js"
const n = Number(process.argv[2] ?? 100000)
const admin = new pg.Client({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres" })
await admin.connect()
await admin.query("DROP DATABASE IF EXISTS clark_bench_try WITH (FORCE)")
await admin.query("CREATE DATABASE clark_bench_try")
await admin.end()
let t = Date.now()
await bulkSeed("postgres://postgres@127.0.0.1:5432/clark_bench_try", n, { onProgress: (w) => { if (w % 100000 === 0 || w === n) console.log("pg", w, (Date.now() - t) / 1000) } })
console.log("pg done", (Date.now() - t) / 1000)
fs.rmSync("/tmp/mbench/try.db", { force: true }); fs.rmSync("/tmp/mbench/try.db-wal", { force: true }); fs.rmSync("/tmp/mbench/try.db-shm", { force: true })
t = Date.now()
await bulkSeed("sqlite:/tmp/mbench/try.db", n, { onProgress: (w) => console.log("sqlite", w, (Date.now() - t) / 1000) })
console.log("sqlite done", (Date.now() - t) / 1000)
