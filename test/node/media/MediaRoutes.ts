/**
 * The media server's routes for the media tests (served by Testbed.ts's
 * servers): audio of each type at and past the size and length limits,
 * mismatched and compressed bodies, redirects, errors, and a stalled
 * response.
 */
import * as http from "node:http"
import * as zlib from "node:zlib"
import * as Audio from "./AudioFiles.js"
import type { Handler } from "./Testbed.js"

// ---------------------------------------------------------------------------
// The media server's routes

const MiB = 1024 * 1024

export const files = {
  wav: Audio.wav({ sampleRate: 8000, seconds: 2 }),
  mp3: Audio.mp3(100),
  ogg: Audio.oggOpus(2.5),
  webm: Audio.webm(3),
  hour: Audio.wav({ sampleRate: 200, seconds: 3600 }),
  long: Audio.wav({ sampleRate: 200, seconds: 3601 }),
  noLength: Audio.webm(undefined),
  /** Exactly 25 MiB, 3,276.8 s at 8 kHz: at both limits' edge, inside. */
  limit: Audio.wav({ sampleRate: 8000, seconds: (25 * MiB - 44) / 8000 })
}

export const durations = { wav: 2, mp3: 100 * Audio.mp3FrameSeconds, ogg: 2.5, webm: 3 }

const send = (response: http.ServerResponse, type: string | undefined, body: Uint8Array, headers: http.OutgoingHttpHeaders = {}) => {
  response.writeHead(200, { ...(type === undefined ? {} : { "content-type": type }), "content-length": body.length, ...headers })
  response.end(body)
}

const redirect = (response: http.ServerResponse, location: string, status = 302) => {
  response.writeHead(status, { location, "content-length": 0 })
  response.end()
}

export interface MediaRoutes {
  readonly handler: Handler
  /** Resolves when the next request for `/stall` has arrived. */
  readonly stallArrived: () => Promise<void>
  /** Resolves when that stalled response's connection has closed. */
  readonly stallClosed: () => Promise<void>
}

export const mediaRoutes = (): MediaRoutes => {
  const arrived: Array<() => void> = []
  const closed: Array<() => void> = []
  const handler: Handler = (request, response) => {
    const url = new URL(request.url ?? "/", "https://test.invalid")
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname)
    if (chain !== null) {
      const left = Number(chain[1])
      return left === 0 ? send(response, "audio/wav", files.wav) : redirect(response, `/chain/${left - 1}`)
    }
    switch (url.pathname) {
      case "/ok.wav":
      case "/sub/dir/song%20one.wav":
        return send(response, "audio/wav", files.wav)
      case "/ok.mp3":
        return send(response, "audio/mpeg", files.mp3)
      case "/ok.ogg":
        return send(response, "audio/ogg", files.ogg)
      case "/ok.webm":
        return send(response, "audio/webm", files.webm)
      case "/params.mp3":
        return send(response, "Audio/MPEG; charset=binary", files.mp3)
      case "/identity.wav":
        return send(response, "audio/wav", files.wav, { "content-encoding": "identity" })
      case "/chunked.ogg":
        response.writeHead(200, { "content-type": "audio/ogg" })
        response.write(files.ogg.subarray(0, 40))
        return response.end(files.ogg.subarray(40))
      case "/hour.wav":
        return send(response, "audio/wav", files.hour)
      case "/long.wav":
        return send(response, "audio/wav", files.long)
      case "/limit.wav":
        return send(response, "audio/wav", files.limit)
      case "/nolength.webm":
        return send(response, "audio/webm", files.noLength)
      case "/page.html":
        return send(response, "text/html; charset=utf-8", new TextEncoder().encode("<p>not audio</p>"))
      case "/video.mp4":
        return send(response, "video/mp4", files.wav)
      case "/untyped":
        return send(response, undefined, files.wav)
      case "/mismatch.mp3":
        return send(response, "audio/mpeg", files.wav)
      case "/mismatch.webm":
        return send(response, "audio/webm", files.ogg)
      case "/garbage.ogg":
        return send(response, "audio/ogg", new Uint8Array(4096).fill(7))
      case "/gzip.wav":
        return send(response, "audio/wav", zlib.gzipSync(files.wav), { "content-encoding": "gzip" })
      case "/gzip-transfer.wav":
        response.writeHead(200, { "content-type": "audio/wav", "transfer-encoding": "gzip, chunked" })
        return response.end(zlib.gzipSync(files.wav))
      case "/declared-huge.wav":
        // Claims 26 MiB, sends a header's worth, then waits: refused before reading on.
        response.writeHead(200, { "content-type": "audio/wav", "content-length": 26 * MiB })
        response.write(files.wav.subarray(0, 44))
        return
      case "/streamed-huge.wav": {
        // No length declared: the reader must stop by itself past 25 MiB.
        response.writeHead(200, { "content-type": "audio/wav" })
        const chunk = new Uint8Array(MiB).fill(128)
        let sent = 0
        const pump = () => {
          while (sent < 27 && !response.destroyed) {
            sent++
            if (!response.write(chunk)) return response.once("drain", pump)
          }
          response.end()
        }
        response.on("error", () => undefined)
        return pump()
      }
      case "/cut.wav":
        response.writeHead(200, { "content-type": "audio/wav", "content-length": files.wav.length })
        response.write(files.wav.subarray(0, 1000))
        return setTimeout(() => response.destroy(), 10)
      case "/stall":
        response.on("close", () => closed.splice(0).forEach((resolve) => resolve()))
        arrived.splice(0).forEach((resolve) => resolve())
        return
      case "/missing":
        response.writeHead(404, { "content-type": "text/plain" })
        return response.end("missing")
      case "/gone":
        response.writeHead(410)
        return response.end()
      case "/broken":
        response.writeHead(500)
        return response.end()
      case "/redirect":
        return redirect(response, url.searchParams.get("to") ?? "/ok.wav", Number(url.searchParams.get("status") ?? 302))
      case "/redirect-without-location":
        response.writeHead(302)
        return response.end()
      case "/set-cookie":
        response.writeHead(302, { location: "/ok.wav", "set-cookie": "session=abc; Path=/" })
        return response.end()
      default:
        response.writeHead(404)
        return response.end()
    }
  }
  return {
    handler,
    stallArrived: () => new Promise((resolve) => arrived.push(resolve)),
    stallClosed: () => new Promise((resolve) => closed.push(resolve))
  }
}
