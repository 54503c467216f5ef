/**
 * What `npm run bench:tiles` measures MapTiles against: a stand-in provider on loopback answering a padded PNG
 * for every tile, in-memory stores for the policy and the key, and a fresh MapTiles layer over them.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as http from "node:http"
import type * as net from "node:net"
import * as zlib from "node:zlib"
import * as MapTilesLayer from "../../../layers/node/tiles/MapTiles.js"
import { MapTiles } from "../../../services/node/MapTiles.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { SecretBroker } from "../../../services/node/SecretBroker.js"
import { settings } from "./settings.js"

// ---------------------------------------------------------------------------
// The stand-in provider

export const pngBase = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64"
)

/** The 1x1 PNG padded with a private ancillary chunk to `size` bytes (decoders skip it). */
export const paddedPng = (size: number) => {
  const dataLength = size - pngBase.length - 12
  const chunk = Buffer.alloc(12 + dataLength, 0x5a)
  chunk.writeUInt32BE(dataLength, 0)
  chunk.write("prVt", 4, "latin1")
  chunk.writeUInt32BE(zlib.crc32(chunk.subarray(4, 8 + dataLength)) >>> 0, 8 + dataLength)
  return Buffer.concat([pngBase.subarray(0, 33), chunk, pngBase.subarray(33)])
}

export const startProvider = Effect.acquireRelease(
  Effect.async<{ readonly server: http.Server; readonly origin: string; readonly requests: { count: number } }>((resume) => {
    const body = paddedPng(settings.tileBytes)
    const requests = { count: 0 }
    const server = http.createServer((_, response) => {
      requests.count++
      response.writeHead(200, { "content-type": "image/png", "content-length": body.length })
      response.end(body)
    })
    server.keepAliveTimeout = 60_000
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, requests })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

// ---------------------------------------------------------------------------
// In-memory stores

export const stores = (policy: unknown, origin: string) =>
  Layer.merge(
    Layer.succeed(
      PreferenceStore,
      PreferenceStore.of({
        get: (key) =>
          Effect.succeed(key === MapTilesLayer.policyPreference ? Option.some({ value: policy, updatedAt: new Date().toISOString() }) : Option.none()),
        set: () => Effect.die("not used"),
        undo: () => Effect.die("not used")
      })
    ),
    Layer.succeed(
      SecretBroker,
      SecretBroker.of({
        get: () => Effect.succeedSome({ value: Redacted.make("bench-key-value"), origin }),
        list: () => Effect.die("not used"),
        put: () => Effect.die("not used"),
        remove: () => Effect.die("not used")
      })
    )
  )

export const policyFor = (origin: string, credential: boolean) => ({
  origin,
  template: "/tiles/{z}/{x}/{y}.png",
  attribution: "© Bench",
  maxZoom: 19,
  ...(credential ? { credential: { secret: "maps:tiles", header: "X-Tile-Key" } } : {})
})

export const unlimited = { perSecond: 1e9, burst: 1e9 }

/** The MapTiles service of a fresh layer, built in the current scope. */
export const buildTiles = (policy: unknown, origin: string, options: MapTilesLayer.Options = {}) =>
  Layer.build(MapTilesLayer.layerWith(options).pipe(Layer.provide(stores(policy, origin)))).pipe(
    Effect.map((context) => Context.get(context, MapTiles))
  )
