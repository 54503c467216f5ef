/**
 * What one chunk costs the node outside the store, piece by piece, timed in the benchmark's process on the body a
 * client sends (262,144 bytes as base64 in JSON): the generic body parse every route uses (src/http/Bodies.ts
 * `parse`: strict UTF-8, the nesting scan, JSON.parse, the string checks) and its pieces, the chunk route's own
 * (src/node/http/ChunkBody.ts `parseChunkBody`: the base64 decoded from the body's bytes, the rest parsed
 * generically), each followed by the payload's schema decode as the route runs it, joining the
 * socket's 64 KiB pieces against copying them into one buffer, the payload's schema decode (the base64 check and
 * decode included), and for comparison the pattern check the schema used before and a plain base64 decode.
 * Times include the garbage collection each piece's allocations cause, spread over the runs.
 */
import { Effect, Schema } from "effect"
import { performance } from "node:perf_hooks"
import { maxChunkBytes, WriteChunk } from "../../../schema/node/Artifact.js"
import { nestedDeeperThan, parse } from "../../../src/http/Bodies.js"
import { parseChunkBody } from "../../../src/node/http/ChunkBody.js"

export interface Piece {
  readonly label: string
  readonly ms: number
}

/** Median of `runs` timings of `f`, after a warm-up. */
const median = (runs: number, f: () => unknown) => {
  for (let i = 0; i < 20; i++) f()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    f()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

export const measurePieces = (runs = 200): ReadonlyArray<Piece> => {
  const text = Buffer.alloc(maxChunkBytes, 0x61).toString("base64")
  const body = Buffer.from(JSON.stringify({ offset: 0, contentBase64: text }))
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  const json = utf8.decode(body)
  const value = JSON.parse(json) as { contentBase64: string }
  const decodePayload = Schema.decodeUnknownSync(WriteChunk)
  const pieces = Array.from({ length: Math.ceil(body.length / 65_536) }, (_, i) => body.subarray(i * 65_536, (i + 1) * 65_536))
  const into = Buffer.allocUnsafeSlow(body.length)
  return [
    { label: "read: join the socket's 64 KiB pieces (Buffer.concat, before)", ms: median(runs, () => Buffer.concat(pieces, body.length)) },
    {
      label: "read: copy them into one pooled buffer (the chunk route's reader)",
      ms: median(runs, () => pieces.reduce((at, piece) => at + piece.copy(into, at), 0))
    },
    {
      label: "body and payload, before: the generic parse, then the schema's base64 decode",
      ms: median(runs, () => decodePayload(Effect.runSync(parse(body, 64))))
    },
    {
      label: "body and payload, now: the chunk route's reader (parseChunkBody), then the schema",
      ms: median(runs, () => decodePayload(Effect.runSync(parseChunkBody(body, 64))))
    },
    { label: "generic body: strict UTF-8 decode (TextDecoder, fatal)", ms: median(runs, () => utf8.decode(body)) },
    { label: "generic body: nesting scan before parsing", ms: median(runs, () => nestedDeeperThan(json, 64)) },
    { label: "generic body: JSON.parse", ms: median(runs, () => JSON.parse(json)) },
    {
      label: "generic body: NUL and lone-surrogate checks of the string",
      ms: median(runs, () => value.contentBase64.includes("\u0000") || !(value.contentBase64 as any).isWellFormed())
    },
    { label: "payload: schema decode (base64 checked by decoding it, once)", ms: median(runs, () => decodePayload(value)) },
    {
      label: "before: the pattern check `^[A-Za-z0-9+/]*={0,2}$` (then a decode in the handler)",
      ms: median(runs, () => /^[A-Za-z0-9+/]*={0,2}$/.test(value.contentBase64))
    },
    { label: "a plain base64 decode (Buffer.from)", ms: median(runs, () => Buffer.from(value.contentBase64, "base64")) }
  ]
}
