/**
 * The body reader of POST …/artifacts/{artifactId}/chunks (issue 15 point 10): the same checks and answers as
 * `readJson` (src/http/Bodies.ts), at a fraction of the CPU and garbage for a body that is one long base64 string.
 *
 * `readJson` reads a body in the socket's pieces and joins them, decodes the UTF-8 into text, and JSON.parse copies
 * the 349,528-character base64 string out of that text: about 1.3 MB of garbage and 1.9 ms of CPU per chunk
 * (docs/decisions.md, "Artifact chunk body"). Here:
 *
 * 1. The body is read once into a buffer of its declared Content-Length, taken from a small pool (the buffer is
 *    free again once the strings below are copied out of it, so a chunk allocates no body buffer).
 * 2. An ASCII body without a backslash is its own text: each string literal is the bytes between a quote and the
 *    next one. A literal of at least `longLiteral` characters with no control character in it (the base64 of a
 *    chunk) is copied out once as Latin-1 text and its place taken by a short placeholder, so `parse` (the
 *    generic checks: depth, JSON.parse, NUL and lone surrogates) runs on a body of a few dozen bytes, and the copy
 *    is put back where the placeholder landed. The payload's schema then checks and decodes the base64 once.
 * 3. Anything else (another character set, an escape, a long literal with a control character, a long key, a
 *    body without a declared length or refused before reading) goes through `readJson` / `parse` as every route
 *    does.
 *
 * Why the cut is safe: a JSON text is a sequence of tokens, and with no backslash in the text every string token
 * runs from a quote to the next quote, while no other token holds a quote. A literal of ASCII characters with no
 * quote, backslash or control character is a valid string token whose value is its bytes, and so is the
 * placeholder; swapping one string token for another changes no other token, so the shorter text parses exactly
 * when the body does, nests as deep, and fails where it fails. The placeholder starts with the escape `\u0001`,
 * which no string of a backslash-free body can hold (a raw control character is a syntax error), so each
 * placeholder found after parsing is one of ours. test/node/artifacts/ChunkBody.test.ts checks that both readers
 * answer alike, on generated bodies and through the real node.
 */
import { Effect } from "effect"
import { isAscii } from "node:buffer"
import type { IncomingMessage } from "node:http"
import { BodyRefused, type BodyRules, parse, readJson } from "../../http/Bodies.js"

/** Shorter string literals are left in the text: a cut saves nothing worth its work there. */
export const longLiteral = 4096

/** The media types taken on the fast read; another spelling `readJson` accepts goes that way. */
const fastMediaTypes = new Set(["application/json", "application/json;charset=utf-8", "application/json;charset=\"utf-8\""])

/** Buffers of the route's limit kept between chunks; more concurrent chunks than this allocate their own. */
const poolSize = 4
const pool: Array<Buffer> = []

const take = (bytes: number): Buffer => {
  const kept = pool.pop()
  if (kept !== undefined && kept.byteLength >= bytes) return kept
  return Buffer.allocUnsafeSlow(bytes)
}

const give = (buffer: Buffer, poolBytes: number) => {
  if (buffer.byteLength === poolBytes && pool.length < poolSize) pool.push(buffer)
}

const unreadable = () => new BodyRefused({ reason: "unreadable", message: "The request body could not be read" })

/** Fills `buffer` with exactly `declared` bytes of the body; fewer or more is an unreadable body. */
const readInto = (source: IncomingMessage, buffer: Buffer, declared: number) =>
  Effect.async<number, BodyRefused>((resume) => {
    let filled = 0
    const onData = (piece: Buffer) => {
      // Node's parser never passes more than the declared length; kept as a check, not as a path.
      if (filled + piece.byteLength > declared) {
        cleanup()
        resume(Effect.fail(unreadable()))
        return
      }
      piece.copy(buffer, filled)
      filled += piece.byteLength
    }
    const onEnd = () => {
      cleanup()
      resume(filled === declared ? Effect.succeed(filled) : Effect.fail(unreadable()))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(unreadable()))
    }
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * Whether the bytes hold one of U+0000-U+001F, which JSON allows in a string only escaped. One `indexOf` (memchr)
 * per character: 32 passes over 349,528 bytes cost less than one regular-expression pass over the same text.
 */
const holdsControl = (bytes: Buffer): boolean => {
  for (let c = 0; c < 0x20; c++) if (bytes.includes(c)) return true
  return false
}

const placeholderPrefix = "\u0001"

/** Puts each cut literal back where its placeholder landed; false when one is missing (it was a key). */
const restore = (value: unknown, literals: ReadonlyArray<string>): boolean => {
  let restored = 0
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const current = stack.pop()
    if (typeof current !== "object" || current === null) continue
    const entries: Array<[string | number, unknown]> = Array.isArray(current)
      ? current.map((item, index) => [index, item])
      : Object.entries(current)
    for (const [key, item] of entries) {
      if (typeof key === "string" && key.startsWith(placeholderPrefix)) return false
      if (typeof item === "string" && item.startsWith(placeholderPrefix)) {
        ;(current as Record<string | number, unknown>)[key] = literals[Number(item.slice(1))]
        restored++
      } else {
        stack.push(item)
      }
    }
  }
  return restored === literals.length
}

/**
 * A body's JSON value, as `parse(bytes, maxDepth)` answers it, without copying its long base64 literals more than
 * once. `bytes` may be reused by the caller once this returns (every string taken from it is a copy).
 */
export const parseChunkBody = (bytes: Buffer, maxDepth: number): Effect.Effect<unknown, BodyRefused> => {
  if (!isAscii(bytes) || bytes.includes(0x5C)) return parse(bytes, maxDepth)
  const pieces: Array<string> = []
  const literals: Array<string> = []
  let copied = 0
  for (let open = bytes.indexOf(0x22); open !== -1;) {
    const close = bytes.indexOf(0x22, open + 1)
    // An unfinished string: the generic parser names the syntax error.
    if (close === -1) return parse(bytes, maxDepth)
    if (close - open - 1 >= longLiteral) {
      // A raw control character makes the body invalid JSON; the generic parser says so.
      if (holdsControl(bytes.subarray(open + 1, close))) return parse(bytes, maxDepth)
      pieces.push(bytes.toString("latin1", copied, open + 1), `\\u0001${literals.length}`)
      literals.push(bytes.toString("latin1", open + 1, close))
      copied = close
    }
    open = bytes.indexOf(0x22, close + 1)
  }
  if (literals.length === 0) return parse(bytes, maxDepth)
  pieces.push(bytes.toString("latin1", copied))
  return Effect.flatMap(
    parse(Buffer.from(pieces.join(""), "latin1"), maxDepth),
    (value) => restore(value, literals) ? Effect.succeed(value) : parse(bytes, maxDepth)
  )
}

const fastMediaType = (header: string | undefined) =>
  header !== undefined && fastMediaTypes.has(header.toLowerCase().replace(/\s+/g, ""))

/** The chunk route's `BodyRules.read`: `readJson`'s answers, read and parsed as above. */
export const readChunkJson = (source: IncomingMessage, rules: BodyRules): Effect.Effect<unknown, BodyRefused> =>
  Effect.suspend(() => {
    const header = source.headers["content-length"]
    const declared = header === undefined ? undefined : Number(header)
    // No declared length, an empty body, one over the limit or of another media type: `readJson` answers it.
    if (declared === undefined || !(declared > 0 && declared <= rules.limitBytes) || !fastMediaType(source.headers["content-type"])) {
      return readJson(source, rules)
    }
    return Effect.acquireUseRelease(
      Effect.sync(() => take(rules.limitBytes)),
      (buffer) =>
        Effect.flatMap(readInto(source, buffer, declared), (filled) => parseChunkBody(buffer.subarray(0, filled), rules.maxDepth)),
      (buffer) => Effect.sync(() => give(buffer, rules.limitBytes))
    )
  })
