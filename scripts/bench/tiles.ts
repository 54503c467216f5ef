/**
 * `npm run bench:tiles`: the node's map tiles, measured through `MapTiles.tile` in this process.
 *
 * 1. A stand-in provider: plain node:http on loopback answering a 20 KiB PNG for every tile.
 * 2. Cache hits: 256 tiles fetched (the cache full), then BENCH_TILES_HITS sequential `tile` calls over
 *    them; latency per call, with the policy without a credential and with a header credential
 *    (the secret broker is read on every request). Stores are in memory: the product's SQLite
 *    PreferenceStore adds one read per request.
 * 3. Provider fetches (cache misses) over loopback keep-alive, with the rate limit lifted for this
 *    part only: the node's own cost per fetch (request, body read, type check by bytes, cache write).
 * 4. The rate limit, as shipped (12 a second, burst 48), on the real clock: one caller asking for new
 *    tiles as fast as it can for BENCH_TILES_SECONDS seconds (5 ms pause after each 429); tiles served
 *    per second, and the sustained rate after the burst.
 * 5. Through HTTP: builds the product (`tsc`), starts the compiled node (`node bin/clark.js node serve`
 *    on a fresh data dir), sets the policy and key as the person, fills 48 tiles (the burst) and
 *    measures GET /map-tiles/{z}/{x}/{y} cache hits with the local token: one at a time over one
 *    keep-alive connection, then 16 in flight; then asks for new tiles until a 429 and checks its
 *    Retry-After. Skipped, with the reason in the report, when the build or the node fails.
 * 6. Prints the tables and rewrites its section of docs/benchmarks.md.
 *
 * Parts 1 to 4 run the TypeScript sources through tsx (the same JavaScript tsc emits).
 * Environment: BENCH_TILES_HITS (default 50000), BENCH_TILES_MISSES (default 500),
 * BENCH_TILES_SECONDS (default 8), BENCH_TILES_HTTP (default 5000 requests per HTTP run; 0 skips it).
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as zlib from "node:zlib"
import * as MapTilesLayer from "../../layers/node/tiles/MapTiles.js"
import { MapTiles } from "../../services/node/MapTiles.js"
import { PreferenceStore } from "../../services/node/PreferenceStore.js"
import { SecretBroker } from "../../services/node/SecretBroker.js"
import { build, freePort, log, percentile, positiveInt, root, seconds, writeDocs } from "./Common.js"


const settings = {
  hits: positiveInt("BENCH_TILES_HITS", 50_000),
  misses: positiveInt("BENCH_TILES_MISSES", 500),
  seconds: positiveInt("BENCH_TILES_SECONDS", 8),
  http: process.env.BENCH_TILES_HTTP === "0" ? 0 : positiveInt("BENCH_TILES_HTTP", 5_000),
  httpConcurrency: 16,
  tileBytes: 20 * 1024,
  /** Tiles kept hot for the hit measurement: the whole cache. */
  hotTiles: 256
}

// ---------------------------------------------------------------------------
// The stand-in provider

const pngBase = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64"
)

/** The 1x1 PNG padded with a private ancillary chunk to `size` bytes (decoders skip it). */
const paddedPng = (size: number) => {
  const dataLength = size - pngBase.length - 12
  const chunk = Buffer.alloc(12 + dataLength, 0x5a)
  chunk.writeUInt32BE(dataLength, 0)
  chunk.write("prVt", 4, "latin1")
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + dataLength)) >>> 0, 8 + dataLength)
  return Buffer.concat([pngBase.subarray(0, 33), chunk, pngBase.subarray(33)])
}

const startProvider = Effect.acquireRelease(
  Effect.async<{ readonly server: http.Server; readonly origin: string; readonly requests: { count: number } }>((resume) => {
    const body = paddedPng(settings.tileBytes)
    const requests = { count: 0 }
    const server = http.createServer((_, response) => {
      requests.count++
      response.writeHead(200, { "content-type": "image/png", "content-length": body.length })
      response.end(body)
    })
    server.keepAliveTimeout = 60_000
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, requests })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

// ---------------------------------------------------------------------------
// In-memory stores

const stores = (policy: unknown, origin: string) =>
  Layer.merge(
    Layer.succeed(
      PreferenceStore,
      PreferenceStore.of({
        get: (key) =>
          Effect.succeed(key === MapTilesLayer.policyPreference ? Option.some({ value: policy, updatedAt: new Date().toISOString() }) : Option.none()),
        set: () => Effect.die("not used"),
        undo: () => Effect.die("not used")
      })
    ),
    Layer.succeed(
      SecretBroker,
      SecretBroker.of({
        get: () => Effect.succeedSome({ value: Redacted.make("bench-key-value"), origin }),
        list: () => Effect.die("not used"),
        put: () => Effect.die("not used"),
        remove: () => Effect.die("not used")
      })
    )
  )

const policyFor = (origin: string, credential: boolean) => ({
  origin,
  template: "/tiles/{z}/{x}/{y}.png",
  attribution: "© Bench",
  maxZoom: 19,
  ...(credential ? { credential: { secret: "maps:tiles", header: "X-Tile-Key" } } : {})
})

const unlimited = { perSecond: 1e9, burst: 1e9 }

/** The MapTiles service of a fresh layer, built in the current scope. */
const buildTiles = (policy: unknown, origin: string, options: MapTilesLayer.Options = {}) =>
  Layer.build(MapTilesLayer.layerWith(options).pipe(Layer.provide(stores(policy, origin)))).pipe(
    Effect.map((context) => Context.get(context, MapTiles))
  )

// ---------------------------------------------------------------------------
// Measurements

interface Latencies {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly mean: number
  readonly max: number
  readonly perSecond: number
}

const summarise = (samples: Array<number>, wallMs: number): Latencies => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    count: samples.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    mean: samples.reduce((sum, value) => sum + value, 0) / samples.length,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    perSecond: (samples.length / wallMs) * 1000
  }
}

/** Times each of `count` sequential calls (no other work in the process). */
const timeEach = <E>(count: number, call: (i: number) => Effect.Effect<unknown, E>) =>
  Effect.gen(function*() {
    const samples = new Array<number>(count)
    const started = performance.now()
    for (let i = 0; i < count; i++) {
      const before = performance.now()
      yield* call(i)
      samples[i] = performance.now() - before
    }
    return summarise(samples, performance.now() - started)
  })

const hotTile = (i: number) => [8, i % settings.hotTiles, 0] as const

const cacheHits = (origin: string, credential: boolean) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, credential), origin, { rate: unlimited })
    for (let i = 0; i < settings.hotTiles; i++) yield* tiles.tile(...hotTile(i))
    // Warm-up: JIT, then measure.
    yield* timeEach(5_000, (i) => tiles.tile(...hotTile(i)))
    return yield* timeEach(settings.hits, (i) => tiles.tile(...hotTile(i)))
  }))

const misses = (origin: string, requests: { count: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, true), origin, { rate: unlimited })
    yield* timeEach(100, (i) => tiles.tile(12, i, 1))
    const before = requests.count
    const result = yield* timeEach(settings.misses, (i) => tiles.tile(12, i, 2))
    if (requests.count - before !== settings.misses) throw new Error("a miss did not reach the provider")
    return result
  }))

interface RateRun {
  readonly perSecond: Array<{ readonly served: number; readonly refused: number }>
  readonly providerRequests: number
  readonly retryAfter: Set<unknown>
}

const atRateLimit = (origin: string, requests: { count: number }) =>
  Effect.scoped(Effect.gen(function*() {
    const tiles = yield* buildTiles(policyFor(origin, true), origin)
    const before = requests.count
    const perSecond = Array.from({ length: settings.seconds }, () => ({ served: 0, refused: 0 }))
    const retryAfter = new Set<unknown>()
    const started = performance.now()
    let next = 0
    for (;;) {
      const second = Math.floor((performance.now() - started) / 1000)
      if (second >= settings.seconds) break
      const outcome = yield* Effect.either(tiles.tile(14, next, 3))
      const bucket = perSecond[Math.min(second, settings.seconds - 1)]!
      if (outcome._tag === "Right") {
        bucket.served++
        next++
      } else if (outcome.left._tag === "TilesRateLimited") {
        bucket.refused++
        retryAfter.add(outcome.left.retryAfterSeconds)
        yield* Effect.sleep("5 millis")
      } else {
        throw new Error(`unexpected refusal ${outcome.left._tag}`)
      }
    }
    return { perSecond, providerRequests: requests.count - before, retryAfter } satisfies RateRun
  }))


// ---------------------------------------------------------------------------
// Through HTTP: the compiled node

interface HttpFigures {
  readonly sequential: Latencies
  readonly concurrent: Latencies
  readonly rateLimited: string
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

const request = (
  port: number,
  method: string,
  requestPath: string,
  headers: Record<string, string>,
  body?: unknown,
  timeoutMs?: number
): Promise<{ readonly status: number; readonly headers: http.IncomingHttpHeaders; readonly body: Buffer }> =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const outgoing = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: requestPath,
        agent,
        headers: { ...headers, ...(payload === undefined ? {} : { "content-type": "application/json" }) }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
        response.on("error", reject)
      }
    )
    outgoing.on("error", reject)
    if (timeoutMs !== undefined) outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    outgoing.end(payload)
  })

const expectOk = async (what: string, pending: ReturnType<typeof request>) => {
  const response = await pending
  if (response.status !== 200) throw new Error(`${what}: ${response.status} ${response.body.toString("utf8").slice(0, 300)}`)
  return response
}

const throughHttp = async (origin: string): Promise<HttpFigures> => {
  build("node")
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clark-bench-tiles-"))
  const dataDir = path.join(tmp, "data")
  const port = await freePort()
  const appSecret = randomBytes(24).toString("base64url")
  const child = spawn(process.execPath, ["bin/clark.js", "node", "serve", "--data-dir", dataDir, "--port", String(port)], {
    cwd: root,
    env: { ...process.env, CC_APP_SECRET: appSecret },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const output: Array<string> = []
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")))
  try {
    const started = Date.now()
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the node exited (${child.exitCode}): ${output.join("").slice(-2000)}`)
      if (Date.now() - started > 60_000) throw new Error("the node did not answer GET /health within 60 s")
      // A connection accepted while the server is still starting may never be answered: 1 s each.
      const healthy = await request(port, "GET", "/health", {}, undefined, 1000).then((response) => response.status === 200, () => false)
      if (healthy) break
      await sleep(100)
    }
    log(`  node healthy on port ${port} after ${seconds(Date.now() - started)}`)
    const token = String(JSON.parse(fs.readFileSync(path.join(dataDir, "identity.json"), "utf8")).localToken)
    const machine = { authorization: `Bearer ${token}` }
    const person = { ...machine, "x-app-secret": appSecret }
    await expectOk("PUT /map-tiles/key", request(port, "PUT", "/map-tiles/key", person, { origin, value: "bench-key-value" }))
    await expectOk(
      "PUT /preferences/maps.tilePolicy",
      request(port, "PUT", "/preferences/maps.tilePolicy", person, { value: policyFor(origin, true) })
    )
    const hot = 48
    const tilePath = (i: number) => `/map-tiles/8/${i % hot}/0`
    for (let i = 0; i < hot; i++) {
      const response = await expectOk(`GET ${tilePath(i)}`, request(port, "GET", tilePath(i), machine))
      if (response.headers["content-type"] !== "image/png" || response.headers["x-content-type-options"] !== "nosniff") {
        throw new Error(`GET ${tilePath(i)}: ${JSON.stringify(response.headers)}`)
      }
      if (response.body.length !== settings.tileBytes) throw new Error(`GET ${tilePath(i)}: ${response.body.length} bytes`)
    }
    const one = async (i: number) => {
      const before = performance.now()
      await expectOk(`GET ${tilePath(i)}`, request(port, "GET", tilePath(i), machine))
      return performance.now() - before
    }
    // Warm-up, then one at a time over one keep-alive connection.
    for (let i = 0; i < 500; i++) await one(i)
    const sequentialSamples: Array<number> = []
    const sequentialStart = performance.now()
    for (let i = 0; i < settings.http; i++) sequentialSamples.push(await one(i))
    const sequential = summarise(sequentialSamples, performance.now() - sequentialStart)
    log(`  sequential: p50 ${ms(sequential.p50)} ms, p99 ${ms(sequential.p99)} ms, ${int(sequential.perSecond)}/s`)
    const concurrentSamples: Array<number> = []
    let next = 0
    const concurrentStart = performance.now()
    await Promise.all(Array.from({ length: settings.httpConcurrency }, async () => {
      while (next < settings.http) concurrentSamples.push(await one(next++))
    }))
    const concurrent = summarise(concurrentSamples, performance.now() - concurrentStart)
    log(`  ${settings.httpConcurrency} in flight: p50 ${ms(concurrent.p50)} ms, p99 ${ms(concurrent.p99)} ms, ${int(concurrent.perSecond)}/s`)
    // New tiles until the limit answers (the burst was spent filling the cache, minus what refilled since).
    let rateLimited = "no 429 within 200 new tiles"
    for (let i = 0; i < 200; i++) {
      const response = await request(port, "GET", `/map-tiles/9/${i}/1`, machine)
      if (response.status === 429) {
        const body = JSON.parse(response.body.toString("utf8"))
        rateLimited = `429 ${body.code} after ${i} new tiles, \`Retry-After: ${response.headers["retry-after"]}\`, \`retryAfterSeconds: ${body.retryAfterSeconds}\``
        break
      }
      if (response.status !== 200) throw new Error(`GET /map-tiles/9/${i}/1: ${response.status} ${response.body.toString("utf8")}`)
    }
    log(`  ${rateLimited}`)
    return { sequential, concurrent, rateLimited }
  } finally {
    child.kill("SIGTERM")
    await Promise.race([new Promise((resolve) => child.once("exit", resolve)), sleep(5000)])
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    agent.destroy()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------
// Report

const ms = (value: number) => (value < 0.1 ? value.toFixed(4) : value.toFixed(3))
const int = (value: number) => Math.round(value).toLocaleString("en-US")

const latencyRow = (label: string, result: Latencies) =>
  `| ${label} | ${int(result.count)} | ${ms(result.p50)} | ${ms(result.p99)} | ${ms(result.mean)} | ${ms(result.max)} | ${int(result.perSecond)} |`

const machine = () => {
  const cpus = os.cpus()
  return `${cpus.length} × ${cpus[0]?.model ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}; Node ${process.version}`
}

const program = Effect.gen(function*() {
  const loadBefore = os.loadavg()[0]!
  const provider = yield* startProvider
  log(`Provider on ${provider.origin}; ${settings.tileBytes} byte tiles`)

  log(`Cache hits: ${settings.hits} calls over ${settings.hotTiles} cached tiles, no credential`)
  const hitsPlain = yield* cacheHits(provider.origin, false)
  log(`  p50 ${ms(hitsPlain.p50)} ms, p99 ${ms(hitsPlain.p99)} ms, ${int(hitsPlain.perSecond)}/s`)
  log(`Cache hits with a header credential (broker read per request)`)
  const hitsKey = yield* cacheHits(provider.origin, true)
  log(`  p50 ${ms(hitsKey.p50)} ms, p99 ${ms(hitsKey.p99)} ms, ${int(hitsKey.perSecond)}/s`)

  log(`Provider fetches: ${settings.misses} misses, rate limit lifted`)
  const missed = yield* misses(provider.origin, provider.requests)
  log(`  p50 ${ms(missed.p50)} ms, p99 ${ms(missed.p99)} ms, ${int(missed.perSecond)}/s`)

  log(`Rate limit as shipped: ${settings.seconds} s of one caller asking for new tiles`)
  const rate = yield* atRateLimit(provider.origin, provider.requests)
  const served = rate.perSecond.map((second) => second.served)
  const sustained = served.slice(1).reduce((sum, value) => sum + value, 0) / Math.max(1, served.length - 1)
  log(`  served per second: ${served.join(", ")}; sustained after the first second ${sustained.toFixed(2)}/s`)

  let viaHttp: HttpFigures | string = "skipped (BENCH_TILES_HTTP=0)"
  if (settings.http > 0) {
    log(`Through HTTP: the compiled node, ${settings.http} cache hits per run`)
    viaHttp = yield* Effect.promise(() =>
      throughHttp(provider.origin).catch((error: unknown) => `not measured: ${error instanceof Error ? error.message : String(error)}`)
    )
  }
  const loadAfter = os.loadavg()[0]!

  const when = new Date().toISOString().slice(0, 16).replace("T", " ")
  const section = `## Local node: map tiles

Written by \`npm run bench:tiles\` (scripts/bench/tiles.ts) on ${when} UTC.

- Machine: ${machine()}. System load (1-minute average) ${loadBefore.toFixed(1)} at the start, ${loadAfter.toFixed(1)} at the end, on ${os.cpus().length} cores.
- Measured through \`MapTiles.tile\` in one process (the layer as shipped, TypeScript sources run by tsx), one call at a time, stores in memory; then through HTTP on the compiled node (SQLite PreferenceStore, file SecretBroker).
- Stand-in provider: plain \`node:http\` on loopback, keep-alive, a ${int(settings.tileBytes)} byte PNG for every tile.

### Cache hits

${int(settings.hotTiles)} tiles cached (the cache full by count), then calls spread over them after 5,000 warm-up calls. Every call reads the policy and decodes it; with a credential it also reads the key. Hits do not consult the rate limit.

| Path | Calls | p50 (ms) | p99 (ms) | mean (ms) | max (ms) | calls/s |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${latencyRow("hit, no credential", hitsPlain)}
${latencyRow("hit, header credential", hitsKey)}

### Provider fetches (cache misses)

Rate limit lifted for this part only, to see the node's cost per fetch: request with the key header, body read and counted, type checked by header and bytes, cache write. Includes the stand-in provider's own work in the same process.

| Path | Fetches | p50 (ms) | p99 (ms) | mean (ms) | max (ms) | fetches/s |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${latencyRow("miss, header credential", missed)}

### At the rate limit (as shipped: 12 a second, burst 48)

One caller asking for new tiles as fast as it can on the real clock, pausing 5 ms after each 429. Provider requests: ${int(rate.providerRequests)} (equal to the tiles served: ${rate.providerRequests === served.reduce((sum, value) => sum + value, 0) ? "yes" : "no"}); \`retryAfterSeconds\` seen: ${[...rate.retryAfter].join(", ") || "none"}.

| Second | Served | Refused (429) |
| ---: | ---: | ---: |
${rate.perSecond.map((second, index) => `| ${index + 1} | ${second.served} | ${int(second.refused)} |`).join("\n")}

Sustained after the first second: **${sustained.toFixed(2)} tiles/s** (limit 12); first second ${served[0] ?? 0} (burst 48 + up to 12 refilled).

### Through HTTP (GET /map-tiles/{z}/{x}/{y}, cache hits)

${typeof viaHttp === "string" ? viaHttp : `The compiled node (\`node bin/clark.js node serve\`, fresh data dir, default logging), policy with a header credential set through PUT as the person, 48 tiles filled (the burst), then GETs with the local token over keep-alive connections, spread over the 48 cached tiles, after 500 warm-up requests. Each request asks the SQLite PreferenceStore for the policy and the file SecretBroker for the key before the cache.

| Clients | Requests | p50 (ms) | p99 (ms) | mean (ms) | max (ms) | requests/s |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${latencyRow("1, one at a time", viaHttp.sequential)}
${latencyRow(`${settings.httpConcurrency} in flight`, viaHttp.concurrent)}

Then new tiles until the limit: ${viaHttp.rateLimited}.`}
`
  const file = writeDocs("tiles", section)
  log(`\n${section}\nWritten to ${file}`)
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
