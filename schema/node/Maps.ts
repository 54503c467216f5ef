/**
 * Map tiles: the tile policy preference (`maps.tilePolicy`), the provider key
 * (`maps:tiles` secret) and tiles fetched by the node from the provider.
 * Neither the template nor the key ever reaches a page.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { refusals } from "./Errors.js"
import { PreferenceWrite, preferenceState } from "./Preferences.js"
import { Authenticated, PersonOnly } from "./Security.js"

export const maxTemplateLength = 300
export const maxAttributionLength = 200
export const maxZoomLimit = 19
export const maxTileBytes = 512 * 1024
export const tileSecretName = "maps:tiles"

const isLoopbackHost = (host: string) =>
  host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/** Exactly scheme://host[:port]: https, or http only for a loopback address. */
export const TileOrigin = Schema.String.pipe(
  Schema.maxLength(300),
  Schema.filter((text) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "must be an origin: scheme://host[:port]"
    }
    if (url.origin !== text) return "must be exactly scheme://host[:port] (lowercase, no path, no default port)"
    if (url.protocol === "https:") return true
    if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return true
    return "must use https (http only for a loopback address)"
  })
).annotations({ identifier: "TileOrigin" })

const placeholders = ["{z}", "{x}", "{y}"] as const
const secretWords = ["key", "token", "secret", "sig", "auth", "pass", "credential", "session"]

/** Why a template does not fit, or undefined when it does. */
export const templateProblem = (template: string): string | undefined => {
  if (!template.startsWith("/")) return "must start with /"
  if (template.length > maxTemplateLength) return `must be at most ${maxTemplateLength} characters`
  for (const placeholder of placeholders) {
    if (template.split(placeholder).length !== 2) return `must contain ${placeholder} exactly once`
  }
  const bare = placeholders.reduce((text, placeholder) => text.replace(placeholder, ""), template)
  if (!/^[A-Za-z0-9/._~\-=&?]*$/.test(bare)) {
    return "may hold only letters, digits, / . _ ~ - = & ? and the placeholders {z}, {x}, {y}"
  }
  const queryStart = template.indexOf("?")
  if (queryStart >= 0) {
    for (const pair of template.slice(queryStart + 1).split("&")) {
      const name = (pair.split("=")[0] ?? "").toLowerCase()
      const word = secretWords.find((secret) => name.includes(secret))
      if (word !== undefined) return `query parameter "${name}" looks like a credential (${word}); use credential`
    }
  }
  return undefined
}

export const TileTemplate = Schema.String.pipe(
  Schema.maxLength(maxTemplateLength),
  Schema.filter((template) => templateProblem(template) ?? true)
).annotations({ identifier: "TileTemplate" })

export const Attribution = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(maxAttributionLength),
  Schema.pattern(/^[^\r\n\u2028\u2029]*$/, { message: () => "must be one line" })
).annotations({ identifier: "Attribution" })

export const MaxZoom = Schema.Int.pipe(Schema.between(0, maxZoomLimit))

/** How the node adds the key: as this header, or as this query parameter (exactly one). */
export const TileCredential = Schema.Struct({
  secret: Schema.Literal(tileSecretName),
  header: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9-]{1,64}$/, { message: () => "must be an HTTP header name" }))
  ),
  query: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.~-]{1,64}$/, { message: () => "must be a query parameter name" }))
  )
}).pipe(
  Schema.filter((credential) =>
    (credential.header === undefined) !== (credential.query === undefined) || "must name exactly one of header or query"
  )
).annotations({ identifier: "TileCredential" })

export const TilePolicy = Schema.Struct({
  origin: TileOrigin,
  template: TileTemplate,
  attribution: Attribution,
  maxZoom: MaxZoom,
  credential: Schema.optional(TileCredential)
}).annotations({ identifier: "TilePolicy" })
export type TilePolicy = typeof TilePolicy.Type

/** The value of `maps.tilePolicy`: one provider, or null (tiles off, the default). */
export const TilePolicyValue = Schema.NullOr(TilePolicy)

export const TilePolicyPreference = preferenceState("maps.tilePolicy", TilePolicyValue).annotations({
  identifier: "TilePolicyPreference"
})

/** `undone: false` with a reason when there is nothing to undo. */
export const TilePolicyUndone = Schema.Struct({
  undone: Schema.Boolean,
  reason: Schema.optional(Schema.String),
  preference: TilePolicyPreference
}).annotations({ identifier: "TilePolicyUndone" })

export const OfflineReason = Schema.Literal("no-provider", "key-unavailable", "key-origin-mismatch")
export type OfflineReason = typeof OfflineReason.Type

/** What a page may know of the provider: never the template or the key. */
export const MapTiles = Schema.Struct({
  provider: Schema.NullOr(Schema.Struct({ origin: Schema.String, attribution: Schema.String, maxZoom: Schema.Int })),
  offline: Schema.optional(OfflineReason)
}).annotations({ identifier: "MapTiles" })

/** Never the value. */
export const TileKeyState = Schema.Struct({
  key: Schema.NullOr(Schema.Struct({ origin: Schema.optional(Schema.String) }))
}).annotations({ identifier: "TileKeyState" })

/**
 * A refused key is never quoted back: Schema's default messages repeat the
 * value ("actual …"), so the value's checks carry their own message.
 */
export const TileKeyWrite = Schema.Struct({
  origin: TileOrigin,
  value: Schema.Redacted(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)).annotations({
      message: () => ({ message: "must be a string of 1 to 4096 characters", override: true })
    })
  )
}).annotations({ identifier: "TileKeyWrite" })

export const TileKeyStored = Schema.Struct({ key: Schema.Struct({ origin: Schema.String }) }).annotations({
  identifier: "TileKeyStored"
})

export const TileKeyRemoved = Schema.Struct({ removed: Schema.Boolean }).annotations({ identifier: "TileKeyRemoved" })

/** Whole numbers; zoom above maxZoom or x, y off the grid is 400 MAP_TILE_OUT_OF_BOUNDS from the handler. */
const TileCoordinate = Schema.NumberFromString.pipe(Schema.int())
export const TilePath = Schema.Struct({ z: TileCoordinate, x: TileCoordinate, y: TileCoordinate })

/**
 * One tile. Declared as image/png; a webp tile is answered by the handler as a
 * raw response with `image/webp` (both checked by provider type and bytes),
 * with `x-content-type-options: nosniff`.
 */
export const TileImage = HttpApiSchema.Uint8Array({ contentType: "image/png" }).annotations({
  description: "image/png or image/webp, at most 512 KiB"
})
export const tileContentTypes = ["image/png", "image/webp"] as const

export class MapsGroup extends HttpApiGroup.make("maps")
  .add(
    HttpApiEndpoint.put("setTilePolicy", "/preferences/maps.tilePolicy")
      .setPayload(PreferenceWrite)
      .addSuccess(TilePolicyPreference)
      .addError(refusals("INVALID_INPUT", "PREFERENCE_INVALID"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("undoTilePolicy", "/preferences/maps.tilePolicy/undo")
      .addSuccess(TilePolicyUndone)
      .middleware(PersonOnly)
  )
  .add(HttpApiEndpoint.get("tiles", "/map-tiles").addSuccess(MapTiles).middleware(Authenticated))
  // 503 MAP_TILE_KEY_UNAVAILABLE on the key routes: the secret broker cannot read or write its store.
  .add(
    HttpApiEndpoint.get("key", "/map-tiles/key")
      .addSuccess(TileKeyState)
      .addError(refusals("MAP_TILE_KEY_UNAVAILABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.put("setKey", "/map-tiles/key")
      .setPayload(TileKeyWrite)
      .addSuccess(TileKeyStored)
      .addError(refusals("INVALID_INPUT", "MAP_TILE_KEY_UNAVAILABLE"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.del("removeKey", "/map-tiles/key")
      .addSuccess(TileKeyRemoved)
      .addError(refusals("MAP_TILE_KEY_UNAVAILABLE"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.get("tile", "/map-tiles/:z/:x/:y")
      .setPath(TilePath)
      .addSuccess(TileImage)
      .addError(refusals(
        "INVALID_INPUT", "MAP_TILE_OUT_OF_BOUNDS", "MAP_TILES_OFF", "MAP_TILE_MISSING", "MAP_TILES_RATE_LIMITED",
        "MAP_TILE_FAILED", "MAP_TILE_REFUSED", "MAP_TILE_KEY_UNAVAILABLE"
      ))
      .middleware(Authenticated)
  )
{}
