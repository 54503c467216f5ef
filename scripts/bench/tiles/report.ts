/** The tables of `npm run bench:tiles` (scripts/bench/tiles.ts) and what they say, as its docs/benchmarks.md section. */
import * as os from "node:os"
import type { HttpFigures } from "./http.js"
import type { Latencies, RateRun } from "./measure.js"
import { settings } from "./settings.js"

// ---------------------------------------------------------------------------
// Report

export const ms = (value: number) => (value < 0.1 ? value.toFixed(4) : value.toFixed(3))
export const int = (value: number) => Math.round(value).toLocaleString("en-US")

export const latencyRow = (label: string, result: Latencies) =>
  `| ${label} | ${int(result.count)} | ${ms(result.p50)} | ${ms(result.p99)} | ${ms(result.mean)} | ${ms(result.max)} | ${int(result.perSecond)} |`

export const machine = () => {
  const cpus = os.cpus()
  return `${cpus.length} × ${cpus[0]?.model ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${os.type()} ${os.release()}; Node ${process.version}`
}

export interface Figures {
  readonly loadBefore: number
  readonly loadAfter: number
  readonly hitsPlain: Latencies
  readonly hitsKey: Latencies
  readonly missed: Latencies
  readonly rate: RateRun
  readonly served: ReadonlyArray<number>
  readonly sustained: number
  readonly viaHttp: HttpFigures | string
}

/** The run's docs/benchmarks.md section. */
export const markdown = ({ hitsKey, hitsPlain, loadAfter, loadBefore, missed, rate, served, sustained, viaHttp }: Figures) => {
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
  return section
}
