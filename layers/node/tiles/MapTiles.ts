/**
 * `MapTiles`: one tile of the `maps.tilePolicy` provider, fetched by the node.
 *
 * For each request, in this order:
 * 1. policy: none is `TilesOff`; z, x, y off the policy's grid is `TileOutOfBounds`;
 * 2. key, when the policy names a credential: absent, or bound to another origin, is
 *    `TileKeyUnavailable` with `offline` as GET /map-tiles says it; a broker failure is the same
 *    without `offline`. Checked before the cache so tiles stop with the key, as GET /map-tiles says;
 * 3. cache (origin + template + z/x/y; never the key): a hit is answered at once;
 * 4. rate limit (12 a second, burst 48), counted on provider fetches only: the limit protects the
 *    provider, and a map page redrawing tiles it already has costs the provider nothing. Over it is
 *    `TilesRateLimited` with `retryAfterSeconds`;
 * 5. fetch (`TileFetcher`): one fetch per tile at a time; concurrent requests for a tile being fetched
 *    wait for that fetch and take no token. The fetch runs in the layer's scope, so a caller going
 *    away does not waste it: the tile lands in the cache.
 */
import { Deferred, Effect, FiberId, Layer, Option, Schema } from "effect"
import { type TilePolicy, TilePolicyValue, tileSecretName } from "../../../schema/node/Maps.js"
import { boundsProblem, MapTiles, offlineReason, type Tile } from "../../../services/node/MapTiles.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { SecretBroker } from "../../../services/node/SecretBroker.js"
import {
  type TileError,
  type TileFetchError,
  TileKeyUnavailable,
  TileOutOfBounds,
  TilesOff,
  TilesRateLimited
} from "../../../services/node/TileErrors.js"
import { type TileCredential, TileFetcher, type TileRequest } from "../../../services/node/TileFetcher.js"
import * as TileCache from "./TileCache.js"
import * as NodeTileFetcher from "./TileFetcher.js"
import * as TileRateLimit from "./TileRateLimit.js"

export const policyPreference = "maps.tilePolicy"

export interface Options extends NodeTileFetcher.Options {
  /** Default: the spec's 12 a second, burst 48. */
  readonly rate?: TileRateLimit.Limits | undefined
  /** A cache made by the caller (tests inspect its keys); default: a new one with the spec's limits. */
  readonly cache?: TileCache.TileCache | undefined
}

const decodePolicy = Schema.decodeUnknown(TilePolicyValue)

/** The template with its placeholders filled (each occurs exactly once, by the policy rules). */
export const tilePath = (template: string, z: number, x: number, y: number) =>
  template.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y))

export const make = (options: Pick<Options, "rate" | "cache"> = {}) =>
  Effect.gen(function*() {
    const preferences = yield* PreferenceStore
    const secrets = yield* SecretBroker
    const fetcher = yield* TileFetcher
    const cache = options.cache ?? (yield* TileCache.make())
    const bucket = yield* TileRateLimit.make(options.rate)
    const rate = options.rate ?? TileRateLimit.tileLimits
    const scope = yield* Effect.scope
    const inflight = new Map<string, Deferred.Deferred<Tile, TileFetchError>>()

    const currentPolicy: Effect.Effect<TilePolicy | null> = preferences.get(policyPreference).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(null),
        // Stored only after validation: a value that does not decode is a bug, not the caller's fault.
        onSome: (state) => Effect.orDie(decodePolicy(state.value))
      }))
    )

    const credentialFor = (policy: TilePolicy): Effect.Effect<Option.Option<TileCredential>, TileKeyUnavailable> => {
      const wanted = policy.credential
      if (wanted === undefined) return Effect.succeedNone
      return secrets.get(tileSecretName).pipe(
        Effect.catchTag("SecretStoreUnavailable", (error) =>
          Effect.logWarning("map tile key could not be read").pipe(
            Effect.annotateLogs({ reason: error.reason }),
            Effect.zipRight(Effect.fail(new TileKeyUnavailable({})))
          )),
        Effect.flatMap((key) => {
          const offline = offlineReason(policy, key)
          if (offline !== undefined || Option.isNone(key)) {
            return Effect.fail(new TileKeyUnavailable({ offline: offline ?? "key-unavailable" }))
          }
          return Effect.succeedSome<TileCredential>(
            wanted.header !== undefined
              ? { in: "header", name: wanted.header, value: key.value.value }
              : { in: "query", name: wanted.query ?? "", value: key.value.value }
          )
        })
      )
    }

    /** Starts the fetch in the layer's scope; it fills the cache and wakes every waiter. */
    const startFetch = (key: string, request: TileRequest) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          // Another request may have started this tile while our token was being taken.
          const running = inflight.get(key)
          if (running !== undefined) return restore(Deferred.await(running))
          const done = Deferred.unsafeMake<Tile, TileFetchError>(FiberId.none)
          inflight.set(key, done)
          const fetch = Effect.interruptible(fetcher.fetch(request)).pipe(
            Effect.tap((tile) =>
              Effect.sync(() => cache.set(key, tile)).pipe(
                Effect.zipRight(Effect.logDebug("map tile fetched")),
                Effect.annotateLogs({ bytes: tile.bytes.byteLength, contentType: tile.contentType })
              )
            ),
            Effect.onExit((exit) =>
              Effect.sync(() => {
                inflight.delete(key)
                Deferred.unsafeDone(done, exit)
              })
            )
          )
          return Effect.forkIn(fetch, scope).pipe(Effect.zipRight(restore(Deferred.await(done))))
        })
      )

    const fetchOnce = (key: string, request: TileRequest): Effect.Effect<Tile, TileFetchError | TilesRateLimited> =>
      Effect.suspend(() => {
        const running = inflight.get(key)
        if (running !== undefined) return Deferred.await(running)
        return Effect.flatMap(bucket.take, (retryAfter): Effect.Effect<Tile, TileFetchError | TilesRateLimited> =>
          Option.isNone(retryAfter)
            ? startFetch(key, request)
            : Effect.fail(
              new TilesRateLimited({ retryAfterSeconds: retryAfter.value, perSecond: rate.perSecond, burst: rate.burst })
            ))
      })

    return MapTiles.of({
      tile: (z, x, y): Effect.Effect<Tile, TileError> =>
        Effect.gen(function*() {
          const policy = yield* currentPolicy
          if (policy === null) return yield* Effect.fail(new TilesOff())
          if (boundsProblem(policy.maxZoom, z, x, y) !== undefined) {
            return yield* Effect.fail(new TileOutOfBounds({ z, x, y, maxZoom: policy.maxZoom }))
          }
          const credential = yield* credentialFor(policy)
          const key = TileCache.cacheKey(policy, z, x, y)
          const cached = cache.get(key)
          if (cached !== undefined) return cached
          return yield* fetchOnce(key, { origin: policy.origin, path: tilePath(policy.template, z, x, y), credential }).pipe(
            Effect.annotateLogs({ provider: policy.origin, tile: `${z}/${x}/${y}` })
          )
        })
    })
  })

/** MapTiles over a given `TileFetcher` (a test or benchmark may bring its own). */
export const layerWithFetcher = (options: Pick<Options, "rate" | "cache"> = {}) =>
  Layer.scoped(MapTiles, make(options))

export const layerWith = (
  options: Options = {}
): Layer.Layer<MapTiles, never, SecretBroker | PreferenceStore> =>
  layerWithFetcher(options).pipe(Layer.provide(NodeTileFetcher.layer(options)))

export const layer: Layer.Layer<MapTiles, never, SecretBroker | PreferenceStore> = layerWith()
