/**
 * Fixtures for the map tile tests: real loopback HTTP(S) servers standing in
 * for tile providers (recording every request they get), in-memory
 * PreferenceStore and SecretBroker over Refs, a log capture, and tile images
 * of exact sizes.
 */
import { Context, Effect, Either, Layer, Logger, LogLevel, Option, Redacted, Ref, Schema, type Scope } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import * as zlib from "node:zlib"
import { TilePolicyValue } from "../../../schema/node/Maps.js"
import * as MapTilesLayer from "../../../layers/node/tiles/MapTiles.js"
import * as TileCache from "../../../layers/node/tiles/TileCache.js"
import { MapTiles, type Tile } from "../../../services/node/MapTiles.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { type Secret, SecretBroker, SecretStoreUnavailable } from "../../../services/node/SecretBroker.js"
import type { NodeError } from "../../../schema/node/Errors.js"
import type { TileError } from "../../../services/node/TileErrors.js"
import { toNodeError } from "../../../src/node/http/Errors.js"

// ---------------------------------------------------------------------------
// Images

/** A valid 1x1 PNG (70 bytes). */
export const pngBase = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64"
)

/** A valid 1x1 lossy WebP (42 bytes). */
export const webp = Buffer.from("UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA", "base64")

/** Length of PNG signature + IHDR chunk: a private chunk goes right after it. */
const ihdrEnd = 8 + 25

/**
 * A valid PNG of exactly `size` bytes (at least 82): the 1x1 image with a private ancillary chunk
 * (`prVt`, which decoders skip) carrying `fill` bytes, so tiles of one size can still differ.
 */
export const png = (size: number = pngBase.length, fill = 0): Buffer => {
  if (size === pngBase.length) return pngBase
  const dataLength = size - pngBase.length - 12
  if (dataLength < 0) throw new Error(`a padded PNG is at least ${pngBase.length + 12} bytes`)
  const chunk = Buffer.alloc(12 + dataLength, fill)
  chunk.writeUInt32BE(dataLength, 0)
  chunk.write("prVt", 4, "latin1")
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + dataLength)) >>> 0, 8 + dataLength)
  return Buffer.concat([pngBase.subarray(0, ihdrEnd), chunk, pngBase.subarray(ihdrEnd)])
}

export const html = Buffer.from("<!doctype html><html><body><script>alert(1)</script></body></html>")

// ---------------------------------------------------------------------------
// Providers

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
}

export type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void

export interface Provider {
  readonly origin: string
  readonly port: number
  /** Every request the provider got, in order. */
  readonly received: Array<Received>
  /** How it answers; replace it to change the answer. */
  handler: Handler
  /** Waits (on real time: this is I/O) until at least `count` requests arrived. */
  readonly waitFor: (count: number) => Effect.Effect<void>
}

export const answer =
  (body: Uint8Array, headers: http.OutgoingHttpHeaders = { "content-type": "image/png" }, status = 200): Handler =>
  (_, response) => {
    response.writeHead(status, { "content-length": body.length, ...headers })
    response.end(body)
  }

export const startProvider = (tls?: { readonly key: string; readonly cert: string }) =>
  Effect.acquireRelease(
    Effect.async<{ readonly provider: Provider; readonly server: http.Server }>((resume) => {
      const received: Array<Received> = []
      const provider: Provider = {
        origin: "",
        port: 0,
        received,
        handler: answer(pngBase),
        waitFor: (count) =>
          Effect.promise(
            () =>
              new Promise<void>((resolve) => {
                const check = () => (received.length >= count ? resolve() : setTimeout(check, 2))
                check()
              })
          )
      }
      const listener = (request: http.IncomingMessage, response: http.ServerResponse) => {
        received.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers })
        provider.handler(request, response)
      }
      const server = tls === undefined ? http.createServer(listener) : https.createServer(tls, listener)
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        Object.assign(provider, { port, origin: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}` })
        resume(Effect.succeed({ provider, server }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ provider }) => provider))

/** An origin on a loopback port nothing listens on. */
export const deadOrigin = Effect.promise(
  () =>
    new Promise<string>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(`http://127.0.0.1:${port}`))
      })
    })
)

// ---------------------------------------------------------------------------
// Policy, key, layers

/** Chosen to need URL encoding and to be easy to find anywhere it should not be. */
export const keyValue = "tk+SECRET/value=42&x"

export const policyFor = (origin: string, overrides: Record<string, unknown> = {}) => ({
  origin,
  template: "/tiles/{z}/{x}/{y}.png",
  attribution: "© Test provider",
  maxZoom: 19,
  ...overrides
})

export const headerCredential = { credential: { secret: "maps:tiles", header: "X-Tile-Key" } }
export const queryCredential = { credential: { secret: "maps:tiles", query: "apikey" } }

export interface World {
  readonly provider: Provider
  /** A second server: a redirect target, the origin of a mismatched key. It must stay untouched. */
  readonly elsewhere: Provider
  readonly tiles: MapTiles["Type"]
  readonly cache: TileCache.TileCache
  /** Every log line written while the world lived (all levels, logfmt). */
  readonly logs: Array<string>
  /** Every refusal `tile` answered, as the tile service raised it. */
  readonly refusals: Array<TileError>
  /** The same refusals as the tile route sends them. */
  readonly errors: Array<NodeError>
  /** undefined: the preference was never set; null: tiles off. Validated like the PUT route would. */
  readonly setPolicy: (value: unknown) => Effect.Effect<void>
  readonly setSecret: (secret: Option.Option<Secret>) => Effect.Effect<void>
  readonly failBroker: (reason: string) => Effect.Effect<void>
  /** `tiles.tile`, recording refusals; failures as the route sends them (code, status, message, members). */
  readonly tile: (z: number, x: number, y: number) => Effect.Effect<Tile, NodeError>
  readonly codeOf: (z: number, x: number, y: number) => Effect.Effect<string>
}

export interface WorldOptions extends MapTilesLayer.Options {
  readonly tls?: { readonly key: string; readonly cert: string }
}

/**
 * Providers, stores and the MapTiles layer, built in the test's scope (on its TestClock). The default
 * policy points at `provider` with no credential; the key is stored bound to `provider`.
 */
export const makeWorld = (options: WorldOptions = {}): Effect.Effect<World, never, Scope.Scope> =>
  Effect.gen(function*() {
    const provider = yield* startProvider(options.tls)
    const elsewhere = yield* startProvider()
    const policy = yield* Ref.make<Option.Option<unknown>>(Option.some(policyFor(provider.origin)))
    const secret = yield* Ref.make<Either.Either<Option.Option<Secret>, SecretStoreUnavailable>>(
      Either.right(Option.some({ value: Redacted.make(keyValue), origin: provider.origin }))
    )
    const preferences = Layer.succeed(
      PreferenceStore,
      PreferenceStore.of({
        get: (key) =>
          key === MapTilesLayer.policyPreference
            ? Effect.map(Ref.get(policy), Option.map((value) => ({ value, updatedAt: "2026-01-01T00:00:00.000Z" })))
            : Effect.succeedNone,
        set: () => Effect.die("not used by MapTiles"),
        undo: () => Effect.die("not used by MapTiles")
      })
    )
    const broker = Layer.succeed(
      SecretBroker,
      SecretBroker.of({
        get: (name) =>
          name === "maps:tiles"
            ? Effect.flatMap(Ref.get(secret), Either.match({ onLeft: Effect.fail, onRight: Effect.succeed }))
            : Effect.succeedNone,
        list: () => Effect.die("not used by MapTiles"),
        put: () => Effect.die("not used by MapTiles"),
        remove: () => Effect.die("not used by MapTiles")
      })
    )
    const logs: Array<string> = []
    const refusals: Array<TileError> = []
    const errors: Array<NodeError> = []
    const cache = options.cache ?? (yield* TileCache.make())
    const context = yield* Layer.build(
      MapTilesLayer.layerWith({ ...options, cache }).pipe(Layer.provide(Layer.merge(preferences, broker)))
    )
    const tiles = Context.get(context, MapTiles)
    const capture = Logger.logfmtLogger.pipe(Logger.map((line) => void logs.push(line)))
    const logged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(Effect.provide(Logger.add(capture)), Logger.withMinimumLogLevel(LogLevel.All))
    const tile = (z: number, x: number, y: number) =>
      logged(tiles.tile(z, x, y)).pipe(
        Effect.tapError((refusal) => Effect.sync(() => refusals.push(refusal))),
        Effect.mapError(toNodeError),
        Effect.tapError((error) => Effect.sync(() => errors.push(error)))
      )
    return {
      provider,
      elsewhere,
      tiles,
      cache,
      logs,
      refusals,
      errors,
      setPolicy: (value) =>
        Ref.set(
          policy,
          value === undefined ? Option.none() : Option.some(Schema.encodeSync(TilePolicyValue)(Schema.decodeUnknownSync(TilePolicyValue)(value)))
        ),
      setSecret: (value) => Ref.set(secret, Either.right(value)),
      failBroker: (reason) => Ref.set(secret, Either.left(new SecretStoreUnavailable({ reason }))),
      tile,
      codeOf: (z, x, y) =>
        tile(z, x, y).pipe(
          Effect.match({ onSuccess: () => "OK", onFailure: (error) => error.code })
        )
    }
  })
