/**
 * What the node accepts from a tile provider, through MapTiles against real
 * loopback servers: png and webp by declared type and bytes, at most 512 KiB
 * (also when Content-Length lies or is absent), no redirects followed, the
 * provider's statuses, network failures, the timeout on the TestClock, https
 * with a given CA, and what the node sends (no cookie, no referrer).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import type * as http from "node:http"
import * as selfsigned from "selfsigned"
import { maxTileBytes } from "../../../schema/node/Maps.js"
import { answer, deadOrigin, html, makeWorld, png, pngBase, policyFor, webp } from "./Fixtures.js"

const refusedWith = (code: string, status: number) => (error: { code: string; status: number }) =>
  expect([error.code, error.status]).toEqual([code, status])

/** Writes a raw HTTP answer on the socket, bypassing node's framing, then closes it. */
const raw = (head: string, body: Buffer) => (request: http.IncomingMessage) => {
  request.socket.write(head)
  request.socket.end(body)
}

describe("TileFetcher: what a tile may be", () => {
  it.scoped("png and webp are accepted, with their type", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const first = yield* world.tile(1, 0, 0)
      expect(first.contentType).toBe("image/png")
      expect(Buffer.from(first.bytes).equals(pngBase)).toBe(true)
      world.provider.handler = answer(webp, { "content-type": "image/webp" })
      const second = yield* world.tile(1, 1, 0)
      expect(second.contentType).toBe("image/webp")
      expect(Buffer.from(second.bytes).equals(webp)).toBe(true)
      // Media types are case-insensitive and may carry parameters.
      world.provider.handler = answer(pngBase, { "content-type": "Image/PNG; foo=bar" })
      expect((yield* world.tile(1, 1, 1)).contentType).toBe("image/png")
    }))

  it.scoped("a type the bytes do not bear out, or another type, is 502 MAP_TILE_REFUSED", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const jpeg = Buffer.from("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDAwMDAwMDAwMDAwMDAwMDAw=", "base64")
      const cases: Array<[string, Buffer, Record<string, string>]> = [
        ["png declared as webp", pngBase, { "content-type": "image/webp" }],
        ["webp declared as png", webp, { "content-type": "image/png" }],
        ["html declared as png", html, { "content-type": "image/png" }],
        ["html as html", html, { "content-type": "text/html" }],
        ["jpeg as jpeg", jpeg, { "content-type": "image/jpeg" }],
        ["svg as svg", Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"), { "content-type": "image/svg+xml" }],
        ["no content type", pngBase, {}],
        ["empty body", Buffer.alloc(0), { "content-type": "image/png" }],
        ["truncated png", pngBase.subarray(0, 6), { "content-type": "image/png" }]
      ]
      for (const [index, [what, body, headers]] of cases.entries()) {
        world.provider.handler = answer(body, headers)
        const error = yield* Effect.flip(world.tile(5, index, 0))
        expect([what, error.code, error.status]).toEqual([what, "MAP_TILE_REFUSED", 502])
        // The message never names the provider's path (the template stays on the node).
        expect(error.message).not.toContain("/tiles")
      }
      expect(world.cache.keys()).toHaveLength(0)
    }))

  it.scoped("exactly 512 KiB is accepted; one byte more is refused, with or without Content-Length", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      world.provider.handler = answer(png(maxTileBytes))
      expect((yield* world.tile(2, 0, 0)).bytes.length).toBe(maxTileBytes)
      world.provider.handler = answer(png(maxTileBytes + 1))
      refusedWith("MAP_TILE_REFUSED", 502)(yield* Effect.flip(world.tile(2, 1, 0)))
      // Chunked: no Content-Length at all; counted as it arrives.
      const over = png(maxTileBytes + 1)
      world.provider.handler = (_, response) => {
        response.writeHead(200, { "content-type": "image/png" })
        response.write(over.subarray(0, 1000))
        response.end(over.subarray(1000))
      }
      const chunked = yield* Effect.flip(world.tile(2, 2, 0))
      refusedWith("MAP_TILE_REFUSED", 502)(chunked)
      expect(chunked.message).toContain(`larger than ${maxTileBytes} bytes`)
    }))

  it.scoped("a Content-Length above the limit is refused before the body is read", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      let closed = false
      world.provider.handler = (request, response) => {
        response.writeHead(200, { "content-type": "image/png", "content-length": 10 * maxTileBytes })
        // Only the start is sent; the node must not wait for the rest.
        response.write(pngBase)
        request.socket.once("close", () => {
          closed = true
        })
      }
      refusedWith("MAP_TILE_REFUSED", 502)(yield* Effect.flip(world.tile(2, 0, 0)))
      yield* Effect.promise(() => new Promise<void>((resolve) => {
        const check = () => (closed ? resolve() : setTimeout(check, 2))
        check()
      }))
    }))

  it.scoped("a Content-Length below the body: a malformed answer, 502 MAP_TILE_FAILED, nothing kept", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const body = png(maxTileBytes + 100_000)
      for (const [index, connection] of ["Connection: close\r\n", ""].entries()) {
        world.provider.handler = raw(
          `HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 1000\r\n${connection}\r\n`,
          body
        )
        const error = yield* Effect.flip(world.tile(2, index, 0))
        refusedWith("MAP_TILE_FAILED", 502)(error)
        expect(error.message).toBe("The tile provider's answer is not valid HTTP")
      }
      expect(world.cache.keys()).toHaveLength(0)
    }))

  it.scoped("no Content-Length and an endless body: the node stops reading at the limit", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const total = 256 * 1024 * 1024
      let written = 0
      let ended = false
      world.provider.handler = (request) => {
        const socket = request.socket
        socket.write("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nConnection: close\r\n\r\n")
        const chunk = png(64 * 1024)
        const pump = () => {
          while (written < total && !socket.destroyed) {
            written += chunk.length
            if (!socket.write(chunk)) return void socket.once("drain", pump)
          }
        }
        socket.on("error", () => {})
        socket.once("close", () => {
          ended = true
        })
        pump()
      }
      refusedWith("MAP_TILE_REFUSED", 502)(yield* Effect.flip(world.tile(2, 0, 0)))
      yield* Effect.promise(() => new Promise<void>((resolve) => {
        const check = () => (ended ? resolve() : setTimeout(check, 2))
        check()
      }))
      // Socket buffers hold a few MiB at most; the 256 MiB were never sent.
      expect(written).toBeLessThan(32 * 1024 * 1024)
    }))
})

describe("TileFetcher: provider answers", () => {
  it.scoped("redirects are not followed: 502 MAP_TILE_REFUSED and the target gets nothing", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      for (const [index, status] of [301, 302, 303, 307, 308].entries()) {
        world.provider.handler = (_, response) => {
          response.writeHead(status, { location: `${world.elsewhere.origin}/tiles/1/0/0.png` })
          response.end()
        }
        refusedWith("MAP_TILE_REFUSED", 502)(yield* Effect.flip(world.tile(3, index, 0)))
      }
      expect(world.provider.received).toHaveLength(5)
      expect(world.elsewhere.received).toHaveLength(0)
    }))

  it.scoped("404 and 410 are 404 MAP_TILE_MISSING; other statuses 502 MAP_TILE_FAILED; nothing cached", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      for (const [index, status] of [404, 410].entries()) {
        world.provider.handler = answer(html, { "content-type": "text/html" }, status)
        refusedWith("MAP_TILE_MISSING", 404)(yield* Effect.flip(world.tile(4, index, 0)))
      }
      for (const [index, status] of [400, 401, 403, 429, 500, 502, 503].entries()) {
        world.provider.handler = answer(pngBase, { "content-type": "image/png" }, status)
        const error = yield* Effect.flip(world.tile(4, index, 1))
        refusedWith("MAP_TILE_FAILED", 502)(error)
        expect(error.message).toBe(`The tile provider answered ${status}`)
      }
      expect(world.cache.keys()).toHaveLength(0)
      world.provider.handler = answer(pngBase)
      expect((yield* world.tile(4, 0, 0)).contentType).toBe("image/png")
    }))

  it.scoped("an unreachable provider, or one that breaks off, is 502 MAP_TILE_FAILED", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      world.provider.handler = (request, response) => {
        response.writeHead(200, { "content-type": "image/png", "content-length": 1000 })
        response.write(pngBase)
        setTimeout(() => request.socket.destroy(), 10)
      }
      refusedWith("MAP_TILE_FAILED", 502)(yield* Effect.flip(world.tile(1, 0, 0)))
      yield* world.setPolicy(policyFor(yield* deadOrigin))
      const unreachable = yield* Effect.flip(world.tile(1, 0, 0))
      refusedWith("MAP_TILE_FAILED", 502)(unreachable)
      expect(unreachable.message).toBe("The tile provider could not be reached")
    }))

  it.scoped("a provider that does not answer within 10 s is 502 MAP_TILE_FAILED, and the request is dropped", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      let dropped = false
      world.provider.handler = (request) => {
        request.socket.once("close", () => {
          dropped = true
        })
      }
      const fiber = yield* Effect.fork(world.tile(1, 0, 0))
      yield* world.provider.waitFor(1)
      yield* TestClock.adjust(Duration.millis(9_999))
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust(Duration.millis(1))
      const error = yield* Effect.flip(Fiber.join(fiber))
      refusedWith("MAP_TILE_FAILED", 502)(error)
      expect(error.message).toMatch(/did not answer within 10s/)
      yield* Effect.promise(() => new Promise<void>((resolve) => {
        const check = () => (dropped ? resolve() : setTimeout(check, 2))
        check()
      }))
    }))

  it.scoped("the node sends no cookie and no referrer, and only its own few headers", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      world.provider.handler = answer(pngBase, { "content-type": "image/png", "set-cookie": "session=abc; Path=/" })
      yield* world.tile(1, 0, 0)
      yield* world.tile(1, 1, 0)
      for (const request of world.provider.received) {
        expect(request.method).toBe("GET")
        expect(Object.keys(request.headers).sort()).toEqual(["accept", "accept-encoding", "connection", "host", "user-agent"])
        expect(request.headers["accept-encoding"]).toBe("identity")
      }
    }))
})

describe("TileFetcher: https", () => {
  it.scoped("an https provider is reached with the given CA, and refused without it", () =>
    Effect.gen(function*() {
      const pems = yield* Effect.promise(() =>
        selfsigned.generate([{ name: "commonName", value: "localhost" }], { keyType: "ec", algorithm: "sha256" })
      )
      const tls = { key: pems.private, cert: pems.cert }
      const trusted = yield* makeWorld({ tls, ca: pems.cert })
      expect(trusted.provider.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      expect((yield* trusted.tile(1, 0, 0)).contentType).toBe("image/png")
      const untrusted = yield* makeWorld({ tls })
      refusedWith("MAP_TILE_FAILED", 502)(yield* Effect.flip(untrusted.tile(1, 0, 0)))
      expect(untrusted.provider.received).toHaveLength(0)
    }))
})
