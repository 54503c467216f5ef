/**
 * Map tiles: the tile policy preference with its undo, what a page may know
 * of the provider (never the template or the key), the provider key held by
 * the secret broker, and the tiles themselves (fetched by `MapTiles`).
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { wireOfCode } from "../../../schema/node/Errors.js"
import { TilePolicyValue, tileSecretName } from "../../../schema/node/Maps.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { MapTiles, offlineReason, type Tile } from "../../../services/node/MapTiles.js"
import { decodePreference } from "../../../services/node/PreferenceErrors.js"
import { type PreferenceState, PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { SecretBroker } from "../../../services/node/SecretBroker.js"
import type { TilesRateLimited } from "../../../services/node/TileErrors.js"
import { toNodeError, wire } from "../http/Errors.js"

export const tilePolicyKey = "maps.tilePolicy"


/** The tile bytes as sent: the provider's checked type (png or webp), never sniffed by the browser. */
const tileResponse = (tile: Tile) =>
  HttpServerResponse.uint8Array(tile.bytes, {
    contentType: tile.contentType,
    headers: { "x-content-type-options": "nosniff" }
  })

/**
 * 429 MAP_TILES_RATE_LIMITED in the node's envelope plus `Retry-After`, which
 * an error value cannot carry through the API's encoder: so the handler
 * answers it itself, with the contract's own wire form of the error.
 */
const rateLimitedResponse = (error: TilesRateLimited) =>
  Effect.map(Effect.orDie(Schema.encode(wireOfCode.MAP_TILES_RATE_LIMITED)(toNodeError(error))), (body) =>
    HttpServerResponse.unsafeJson(body, {
      status: 429,
      headers: { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterSeconds))) }
    }))

export const MapsLive = HttpApiBuilder.group(NodeApi, "maps", (handlers) =>
  Effect.gen(function*() {
    const preferences = yield* PreferenceStore
    const secrets = yield* SecretBroker
    const tiles = yield* MapTiles
    const audit = yield* AuditLog
    /** Who changed the map setup, and what (an origin at most: never the key or the template). */
    const record = (kind: string, detail: Record<string, unknown> = {}) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        audit.append({ kind, surface: caller.surface, channel: caller.channel, detail }))

    const decodeStored = Schema.decodeUnknown(TilePolicyValue)

    /** The stored preference as answered; a stored value that no longer decodes is a server fault. */
    const answer = (state: PreferenceState) =>
      Effect.map(Effect.orDie(decodeStored(state.value)), (value) => ({
        key: tilePolicyKey,
        value,
        updatedAt: state.updatedAt
      } as const))

    const currentPolicy = Effect.flatMap(
      preferences.get(tilePolicyKey),
      Option.match({ onNone: () => Effect.succeed(null), onSome: (state) => Effect.orDie(decodeStored(state.value)) })
    )

    const storedKey = secrets.get(tileSecretName).pipe(
      Effect.catchTag("SecretStoreUnavailable", (error) =>
        Effect.as(Effect.logWarning("The map tile key cannot be read", { reason: error.reason }), "unavailable" as const))
    )

    return handlers
      .handle("setTilePolicy", ({ payload }) =>
        Effect.gen(function*() {
          const value = yield* wire(decodePreference(tilePolicyKey, TilePolicyValue)(payload.value))
          const stored = yield* preferences.set(tilePolicyKey, value)
          yield* record("maps.tile-policy.set", { origin: value?.origin ?? null })
          return yield* answer(stored)
        }))
      .handle("undoTilePolicy", () =>
        Effect.gen(function*() {
          const outcome = yield* preferences.undo(tilePolicyKey)
          if (outcome.undone) yield* record("maps.tile-policy.undo")
          const preference = yield* answer(outcome.state)
          return outcome.undone ? { undone: true, preference } : { undone: false, reason: outcome.reason, preference }
        }))
      .handle("tiles", () =>
        Effect.gen(function*() {
          const policy = yield* currentPolicy
          // The broker is asked only when the policy sends a key.
          const key = policy?.credential === undefined ? Option.none() : yield* storedKey
          const offline = offlineReason(policy, key)
          // A provider whose tiles cannot be drawn is not offered: the page shows its offline map.
          if (policy === null || offline !== undefined) return { provider: null, offline: offline ?? "no-provider" }
          return { provider: { origin: policy.origin, attribution: policy.attribution, maxZoom: policy.maxZoom } }
        }))
      .handle("key", () =>
        secrets.get(tileSecretName).pipe(
          Effect.map(Option.match({
            onNone: () => ({ key: null }),
            onSome: (secret) => ({ key: secret.origin === undefined ? {} : { origin: secret.origin } })
          })),
          wire
        ))
      .handle("setKey", ({ payload }) =>
        secrets.put(tileSecretName, { value: payload.value, origin: payload.origin }).pipe(
          wire,
          Effect.zipRight(record("maps.tile-key.set", { origin: payload.origin })),
          Effect.as({ key: { origin: payload.origin } })
        ))
      .handle("removeKey", () =>
        secrets.remove(tileSecretName).pipe(
          wire,
          Effect.tap((removed) => removed ? record("maps.tile-key.remove") : Effect.void),
          Effect.map((removed) => ({ removed }))
        ))
      .handle("tile", ({ path }) =>
        tiles.tile(path.z, path.x, path.y).pipe(
          Effect.map(tileResponse),
          Effect.catchTag("TilesRateLimited", rateLimitedResponse),
          wire
        ))
  }))
