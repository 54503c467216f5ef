/**
 * What can keep the node from answering a map tile, as the tile service and
 * its fetcher see it. None of these knows an HTTP status: the node's one
 * mapping module (src/node/http/Errors.ts) turns each into its wire code.
 * Nothing here ever holds the template, the path, the query or the key.
 */
import { Schema } from "effect"
import { OfflineReason } from "../../schema/node/Maps.js"

/** No `maps.tilePolicy` is set: tiles are off. */
export class TilesOff extends Schema.TaggedError<TilesOff>()("TilesOff", {}) {}

/** Zoom above the policy's maxZoom, or x, y off the grid of that zoom. */
export class TileOutOfBounds extends Schema.TaggedError<TileOutOfBounds>()("TileOutOfBounds", {
  z: Schema.Number,
  x: Schema.Number,
  y: Schema.Number,
  maxZoom: Schema.Int
}) {}

/** Over the provider's rate (12 a second, burst 48): counted on provider fetches only. */
export class TilesRateLimited extends Schema.TaggedError<TilesRateLimited>()("TilesRateLimited", {
  retryAfterSeconds: Schema.Number,
  perSecond: Schema.Number,
  burst: Schema.Number
}) {}

/**
 * The policy sends a key and none can be used: `offline` says why as GET
 * /map-tiles does (absent or bound to another origin); absent when the
 * secret broker itself could not read it.
 */
export class TileKeyUnavailable extends Schema.TaggedError<TileKeyUnavailable>()("TileKeyUnavailable", {
  offline: Schema.optional(OfflineReason)
}) {}

/**
 * The provider's answer, described for a person: statuses, sizes and types
 * only, never the URL. `detail` is for the log.
 */
const providerAnswer = { reason: Schema.String }

/** The provider has no such tile (404 or 410): ordinary beyond its coverage. */
export class TileMissing extends Schema.TaggedError<TileMissing>()("TileMissing", providerAnswer) {}

/** The provider failed (another status, a network error, a timeout). */
export class TileFetchFailed extends Schema.TaggedError<TileFetchFailed>()("TileFetchFailed", providerAnswer) {}

/** The provider's answer broke the rules (a redirect, a type that is not png/webp, over 512 KiB). */
export class TileRefused extends Schema.TaggedError<TileRefused>()("TileRefused", providerAnswer) {}

/** What the fetcher can fail with. */
export type TileFetchError = TileMissing | TileFetchFailed | TileRefused

export type TileError = TilesOff | TileOutOfBounds | TilesRateLimited | TileKeyUnavailable | TileFetchError
