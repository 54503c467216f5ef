/** The settings of `npm run bench:tiles` (scripts/bench/tiles.ts), from its environment. */
import { positiveInt } from "../Common.js"

export const settings = {
  hits: positiveInt("BENCH_TILES_HITS", 50_000),
  misses: positiveInt("BENCH_TILES_MISSES", 500),
  seconds: positiveInt("BENCH_TILES_SECONDS", 8),
  http: process.env.BENCH_TILES_HTTP === "0" ? 0 : positiveInt("BENCH_TILES_HTTP", 5_000),
  httpConcurrency: 16,
  tileBytes: 20 * 1024,
  /** Tiles kept hot for the hit measurement: the whole cache. */
  hotTiles: 256
}
