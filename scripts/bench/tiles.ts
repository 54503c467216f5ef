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
import { Effect } from "effect"
import * as os from "node:os"
import { log, writeDocs } from "./Common.js"
import { type HttpFigures, throughHttp } from "./tiles/http.js"
import { atRateLimit, cacheHits, misses } from "./tiles/measure.js"
import { startProvider } from "./tiles/provider.js"
import { int, markdown, ms } from "./tiles/report.js"
import { settings } from "./tiles/settings.js"

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

  const section = markdown({ loadBefore, loadAfter, hitsPlain, hitsKey, missed, rate, served, sustained, viaHttp })
  const file = writeDocs("tiles", section)
  log(`\n${section}\nWritten to ${file}`)
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
