/**
 * Map tiles fetched by the node from the provider of `maps.tilePolicy`, with
 * the provider key added only to requests to its bound origin.
 */
import { Context, type Effect, Option } from "effect"
import type { OfflineReason, TilePolicy } from "../../schema/node/Maps.js"
import type { Secret } from "./SecretBroker.js"
import type { TileError } from "./TileErrors.js"

export interface Tile {
  readonly contentType: "image/png" | "image/webp"
  readonly bytes: Uint8Array
}

export class MapTiles extends Context.Tag("clark/node/MapTiles")<MapTiles, {
  /**
   * One tile, from the cache or the provider. Fails with the spec's tile
   * refusals: tiles off, out of bounds, rate limited (with
   * `retryAfterSeconds`), the provider's missing, failed or refused answer,
   * the key unavailable (with `offline` when the reason is the key's state).
   */
  readonly tile: (z: number, x: number, y: number) => Effect.Effect<Tile, TileError>
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

/** Why z/x/y is not a tile of a grid up to `maxZoom`, or undefined. */
export const boundsProblem = (maxZoom: number, z: number, x: number, y: number): string | undefined => {
  if (!Number.isInteger(z) || z < 0 || z > maxZoom) return `zoom ${z} is not a whole number from 0 to ${maxZoom}`
  const last = 2 ** z - 1
  if (!Number.isInteger(x) || x < 0 || x > last) return `x ${x} is off the grid at zoom ${z} (0 to ${last})`
  if (!Number.isInteger(y) || y < 0 || y > last) return `y ${y} is off the grid at zoom ${z} (0 to ${last})`
  return undefined
}
