/**
 * Map tiles fetched by the node from the provider of `maps.tilePolicy`, with
 * the provider key added only to requests to its bound origin.
 */
import { Context, type Effect, Option } from "effect"
import type { NodeError } from "../../schema/node/Errors.js"
import type { OfflineReason, TilePolicy } from "../../schema/node/Maps.js"
import type { Secret } from "./SecretBroker.js"

export interface Tile {
  readonly contentType: "image/png" | "image/webp"
  readonly bytes: Uint8Array
}

export class MapTiles extends Context.Tag("clark/node/MapTiles")<MapTiles, {
  /**
   * One tile, from the cache or the provider. Fails with the spec's tile
   * refusals as `NodeError`: MAP_TILES_OFF, MAP_TILE_OUT_OF_BOUNDS,
   * MAP_TILES_RATE_LIMITED (with `retryAfterSeconds`), MAP_TILE_MISSING,
   * MAP_TILE_FAILED, MAP_TILE_REFUSED, MAP_TILE_KEY_UNAVAILABLE (with `offline`
   * when the reason is the key's state).
   */
  readonly tile: (z: number, x: number, y: number) => Effect.Effect<Tile, NodeError>
}>() {}

/**
 * Why a policy's tiles cannot be drawn, or undefined when they can. `key` is
 * the stored `maps:tiles` secret, or "unavailable" when the broker cannot
 * read it. A key without a bound origin is never sent anywhere, so it counts
 * as bound elsewhere.
 */
export const offlineReason = (
  policy: TilePolicy | null,
  key: Option.Option<Secret> | "unavailable"
): OfflineReason | undefined => {
  if (policy === null) return "no-provider"
  if (policy.credential === undefined) return undefined
  if (key === "unavailable" || Option.isNone(key)) return "key-unavailable"
  return key.value.origin === policy.origin ? undefined : "key-origin-mismatch"
}
