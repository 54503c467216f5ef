/**
 * `npm run bench:artifacts`: artifact chunk writes through the node against raw `fs` appends, in one run.
 *
 * 1. The node in this process on a loopback port (the real HTTP server, handlers, SQLite store and files) on a
 *    fresh data dir; a conversation created over HTTP and a widget placed in its database.
 * 2. Node: BENCH_ARTIFACTS_MIB MiB written as 262,144-byte chunks (base64 in JSON, the largest the route takes),
 *    one at a time over one keep-alive connection, into files of 24 MiB (then finalized and discarded so the
 *    widget's 128 MiB never fills). Each chunk is on disk (datasync) before it is answered.
 * 3. Raw fs, the same bytes in the same chunks: `FileHandle.appendFile` then `datasync` per chunk (the same
 *    guarantee), and `appendFile` alone (the page cache, no guarantee) for scale.
 * 4. Rounds alternate baseline and node, so both see the same load; the best round of each is compared.
 * 5. Prints the table and rewrites its section of docs/benchmarks.md.
 *
 * Environment: BENCH_ARTIFACTS_MIB (default 48 per side per round), BENCH_ARTIFACTS_ROUNDS (default 3).
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as NoModel from "../../layers/node/model/NoModel.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import * as SqlWidgetInstances from "../../layers/node/sql/SqlWidgetInstances.js"
import { maxChunkBytes } from "../../schema/node/Artifact.js"
import { WidgetInstances } from "../../services/node/WidgetInstances.js"
import { serveApi } from "../../src/http/ServeApi.js"
import { createServer } from "../../src/node/http/ClientError.js"
import { ApiLive } from "../../src/node/Server.js"
import { log, positiveInt, writeDocs } from "./Common.js"

const settings = {
  mib: positiveInt("BENCH_ARTIFACTS_MIB", 48),
  rounds: positiveInt("BENCH_ARTIFACTS_ROUNDS", 3),
  fileBytes: 24 * 1024 * 1024
}

const chunk = Buffer.alloc(maxChunkBytes, 0x61)
const chunkBase64 = chunk.toString("base64")
const chunksPerRun = Math.ceil((settings.mib * 1024 * 1024) / maxChunkBytes)
const chunksPerFile = settings.fileBytes / maxChunkBytes
const mibOf = (chunks: number) => (chunks * maxChunkBytes) / (1024 * 1024)

const rawAppend = async (dir: string, sync: boolean) => {
  const started = performance.now()
  let handle: fs.promises.FileHandle | undefined
  for (let i = 0; i < chunksPerRun; i++) {
    if (i % chunksPerFile === 0) {
      await handle?.close()
      handle = await fs.promises.open(path.join(dir, `raw-${i}`), "a", 0o600)
    }
    await handle!.appendFile(chunk)
    if (sync) await handle!.datasync()
  }
  await handle?.close()
  return performance.now() - started
}

const main = Effect.gen(function*() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-artifacts-"))
  const rawDir = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-raw-"))
  const appSecret = "bench-app-secret"
  const context = yield* Layer.build(
    serveApi(ApiLive({ dataDir, appSecret: Redacted.make(appSecret), model: NoModel.layer, marketplaceUrl: null, registryUrl: null }))
      .pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
  )
  const baseUrl = yield* HttpServer.addressFormattedWith((address) => Effect.succeed(address)).pipe(Effect.provide(context))
  const token = JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken as string
  const headers = { authorization: `Bearer ${token}`, "x-app-secret": appSecret, "content-type": "application/json" }
  const call = (method: string, url: string, body?: unknown) =>
    Effect.promise(async () => {
      const response = await fetch(`${baseUrl}${url}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
      const json: any = await response.json()
      if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`)
      return json
    })

  const { conversationId } = yield* call("POST", "/conversations", {})
  const instance = yield* Effect.scoped(Effect.flatMap(
    Layer.build(SqlWidgetInstances.layer.pipe(Layer.provide(NodeDatabase.layer(dataDir)))),
    (widgets) =>
      Effect.provide(
        Effect.flatMap(WidgetInstances, (instances) =>
          instances.place({
            conversationId,
            packageId: "@bench/files",
            version: "1.0.0",
            contentDigest: "sha256:0",
            widgetId: "writer",
            props: {},
            bindings: [],
            offeredActions: [],
            taskId: null
          })),
        widgets
      )
  ))
  const prefix = `/conversations/${conversationId}/widgets/${instance.instanceId}/artifacts`

  const nodeRun = Effect.gen(function*() {
    const started = performance.now()
    let artifactId = ""
    let offset = 0
    for (let i = 0; i < chunksPerRun; i++) {
      if (i % chunksPerFile === 0) {
        if (artifactId !== "") yield* call("DELETE", `${prefix}/${artifactId}`)
        artifactId = (yield* call("POST", prefix, { mimeType: "text/plain" })).artifactRef.artifactId
        offset = 0
      }
      yield* call("POST", `${prefix}/${artifactId}/chunks`, { offset, contentBase64: chunkBase64 })
      offset += maxChunkBytes
    }
    const elapsed = performance.now() - started
    yield* call("DELETE", `${prefix}/${artifactId}`)
    return elapsed
  })

  const results = { node: [] as Array<number>, synced: [] as Array<number>, cached: [] as Array<number> }
  for (let round = 0; round < settings.rounds; round++) {
    results.synced.push(yield* Effect.promise(() => rawAppend(rawDir, true)))
    fs.rmSync(rawDir, { recursive: true, force: true })
    fs.mkdirSync(rawDir)
    results.node.push(yield* nodeRun)
    results.cached.push(yield* Effect.promise(() => rawAppend(rawDir, false)))
    fs.rmSync(rawDir, { recursive: true, force: true })
    fs.mkdirSync(rawDir)
    log(`round ${round + 1}: node ${results.node.at(-1)!.toFixed(0)} ms, fs+datasync ${results.synced.at(-1)!.toFixed(0)} ms, fs ${results.cached.at(-1)!.toFixed(0)} ms`)
  }
  const mib = mibOf(chunksPerRun)
  const rate = (ms: ReadonlyArray<number>) => mib / (Math.min(...ms) / 1000)
  const node = rate(results.node)
  const synced = rate(results.synced)
  const cached = rate(results.cached)
  const ratio = node / synced
  const section = [
    "## Artifact chunk writes (`npm run bench:artifacts`)",
    "",
    `${mib} MiB per run in chunks of 262,144 bytes, ${settings.rounds} alternating rounds, best round of each; taken on a`,
    "machine loaded by other sessions (figures move several-fold between runs; compare within one run).",
    "",
    "| writer | MiB/s |",
    "|---|---|",
    `| node: POST …/artifacts/{id}/chunks over HTTP (base64 JSON, datasync, row update) | ${node.toFixed(1)} |`,
    `| raw fs: appendFile + datasync per chunk (the same guarantee) | ${synced.toFixed(1)} |`,
    `| raw fs: appendFile alone (page cache, nothing durable) | ${cached.toFixed(1)} |`,
    "",
    `Node against raw durable appends: ${(ratio * 100).toFixed(0)} % (target at least 50 %); against appends that`,
    `sync nothing: ${((node / cached) * 100).toFixed(0)} %.`
  ].join("\n")
  log(section)
  writeDocs("artifacts", section)
  fs.rmSync(dataDir, { recursive: true, force: true })
  fs.rmSync(rawDir, { recursive: true, force: true })
})

Effect.runPromise(Effect.scoped(main)).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
