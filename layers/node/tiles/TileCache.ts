/**
 * The tile cache: lru-cache bounded by count and bytes, with a TTL read from
 * Effect's `Clock` (lru-cache's `perf` option), so TestClock expires entries.
 * Keys name the provider (origin + template) and the tile, never the key value:
 * a policy change can never serve the old provider's tiles.
 */
import { type Clock, Duration, Effect } from "effect"
import { LRUCache } from "lru-cache"
import type { TilePolicy } from "../../../schema/node/Maps.js"
import type { Tile } from "../../../services/node/MapTiles.js"

export interface Limits {
  readonly maxTiles: number
  readonly maxBytes: number
  readonly ttl: Duration.DurationInput
}

/** The spec's cache: up to 256 tiles or 24 MiB, for one hour. */
export const tileCacheLimits: Limits = { maxTiles: 256, maxBytes: 24 * 1024 * 1024, ttl: Duration.hours(1) }

export interface TileCache {
  readonly get: (key: string) => Tile | undefined
  readonly set: (key: string, tile: Tile) => void
  /** The keys held now, most recently used first (for tests and diagnostics; no values). */
  readonly keys: () => ReadonlyArray<string>
  /** Bytes held now. */
  readonly bytes: () => number
}

/**
 * origin + template + z/x/y. `#` cannot occur in an origin or a template, so two providers never
 * share a key.
 */
export const cacheKey = (policy: Pick<TilePolicy, "origin" | "template">, z: number, x: number, y: number) =>
  `${policy.origin}${policy.template}#${z}/${x}/${y}`

export const makeWith = (clock: Clock.Clock, limits: Limits = tileCacheLimits): TileCache => {
  const cache = new LRUCache<string, Tile>({
    max: limits.maxTiles,
    maxSize: limits.maxBytes,
    sizeCalculation: (tile) => Math.max(1, tile.bytes.byteLength),
    ttl: Duration.toMillis(limits.ttl),
    // Age is counted from the fetch: a tile read often still goes back to the provider after an hour.
    updateAgeOnGet: false,
    allowStale: false,
    // Read the clock on every check; lru-cache otherwise caches "now" for 1 ms of real time.
    ttlResolution: 0,
    // lru-cache takes a start time of 0 to mean "no TTL", and TestClock starts at 0: shift by 1 ms.
    perf: { now: () => clock.unsafeCurrentTimeMillis() + 1 }
  })
  return {
    get: (key) => cache.get(key),
    set: (key, tile) => {
      cache.set(key, tile)
    },
    keys: () => [...cache.keys()],
    bytes: () => cache.calculatedSize
  }
}

/** A cache on the clock of the current context. */
export const make = (limits: Limits = tileCacheLimits) => Effect.map(Effect.clock, (clock) => makeWith(clock, limits))
