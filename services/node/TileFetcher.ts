/**
 * One GET of one tile from the tile provider, with the spec's checks on the
 * answer (type by header and bytes, size, no redirects). Separate from
 * `MapTiles` so the policy, limits and cache can be driven over a fetcher a
 * test or benchmark replaces.
 */
import { Context, type Effect, type Option, type Redacted } from "effect"
import type { Tile } from "./MapTiles.js"
import type { TileFetchError } from "./TileErrors.js"

/** Where the provider key goes: the header or query parameter the policy names. */
export interface TileCredential {
  readonly in: "header" | "query"
  readonly name: string
  readonly value: Redacted.Redacted<string>
}

export interface TileRequest {
  /** The policy origin, exactly scheme://host[:port]. The request goes there and nowhere else. */
  readonly origin: string
  /** The template with {z}, {x}, {y} substituted: path and query, starting with `/`. */
  readonly path: string
  /**
   * Added to this request only, at the last moment; the caller has checked that the key is bound to
   * `origin`. Never logged, never in an error message.
   */
  readonly credential: Option.Option<TileCredential>
}

export class TileFetcher extends Context.Tag("clark/node/TileFetcher")<TileFetcher, {
  /**
   * Fails with `TileMissing` (provider 404/410), `TileRefused` (a redirect, a type that is not
   * png/webp by header and bytes, a body over 512 KiB) or `TileFetchFailed` (other statuses, network
   * errors, timeout). Reasons name statuses and sizes only: never the path, query or key.
   */
  readonly fetch: (request: TileRequest) => Effect.Effect<Tile, TileFetchError>
}>() {}
