/**
 * The body reader of POST …/artifacts/{artifactId}/chunks (issue 15 point 10): the same checks and answers as
 * `readJson` (src/http/Bodies.ts), at a fraction of the CPU and garbage for a body that is one long base64 string.
 *
 * `readJson` reads a body in the socket's pieces and joins them, decodes the UTF-8 into text, JSON.parse copies the
 * 349,528-character base64 string out of that text and the payload's schema decodes that: about 1.3 MB of garbage
 * per chunk, two of it strings large enough for V8's large-object space, whose fresh pages cost more than the copies
 * (docs/decisions.md, "Artifact chunk body reader"). Here:
 *
 * 1. The body is read once into a buffer of its declared Content-Length, taken from a small pool (the buffer is
 *    free again once the reader has run: everything it keeps is copied out of it).
 * 2. An ASCII body without a backslash is its own text: each string literal is the bytes between a quote and the
 *    next one. A literal of at least `longLiteral` characters is cut out and its place taken by a short placeholder,
 *    so `parse` (the generic checks: depth, JSON.parse, NUL and lone surrogates) runs on a body of a few dozen
 *    bytes. A cut literal that is standard base64 within a chunk's length is decoded straight from the body's bytes
 *    (`decodeBase64Ascii`, in pieces too small for the large-object space), and at the top-level `contentBase64` it
 *    goes back as those bytes (`DecodedBase64`, which the payload's schema takes as they are); anywhere else, or
 *    when it is not base64 (then it must hold no control character), it goes back as its text.
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
 * answer alike (the decoded bytes read as their base64), on generated bodies and through the real node.
 */
import { Effect } from "effect"
import { isAscii } from "node:buffer"
import type { IncomingMessage } from "node:http"
import { DecodedBase64, decodeBase64Ascii, maxChunkBytes } from "../../../schema/node/Artifact.js"
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

/** A long string literal cut out of the text: where its characters are, and its bytes when it is chunk base64. */
interface Literal {
  readonly start: number
  readonly end: number
  readonly decoded: Uint8Array | undefined
}

/** The longest base64 text the route takes; a longer literal stays text, for the payload's schema to refuse. */
const maxTextLength = 4 * Math.ceil(maxChunkBytes / 3)

/**
 * Puts each cut literal back where its placeholder landed: the chunk's `contentBase64` as its decoded bytes, any
 * other as its text. False when one is missing (it was a key).
 */
const restore = (value: unknown, literals: ReadonlyArray<Literal>, bytes: Buffer): boolean => {
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
        const literal = literals[Number(item.slice(1))]!
        const payload = current === value && key === "contentBase64" && !Array.isArray(current)
        ;(current as Record<string | number, unknown>)[key] = payload && literal.decoded !== undefined
          ? new DecodedBase64(literal.decoded, literal.end - literal.start)
          : bytes.toString("latin1", literal.start, literal.end)
        restored++
      } else {
        stack.push(item)
      }
    }
  }
  return restored === literals.length
}

/**
 * A body's JSON value, as `parse(bytes, maxDepth)` answers it, except that a top-level `contentBase64` of standard
 * base64 within the chunk's length is its bytes (`DecodedBase64`), decoded from `bytes` without a string of it.
 * Every string taken from `bytes` is a copy, so the caller may reuse them once the effect has run.
 */
export const parseChunkBody = (bytes: Buffer, maxDepth: number): Effect.Effect<unknown, BodyRefused> => {
  if (!isAscii(bytes) || bytes.includes(0x5C)) return parse(bytes, maxDepth)
  const pieces: Array<string> = []
  const literals: Array<Literal> = []
  let copied = 0
  for (let open = bytes.indexOf(0x22); open !== -1;) {
    const close = bytes.indexOf(0x22, open + 1)
    // An unfinished string: the generic parser names the syntax error.
    if (close === -1) return parse(bytes, maxDepth)
    if (close - open - 1 >= longLiteral) {
      const characters = bytes.subarray(open + 1, close)
      // Base64 holds no control character; any other literal is checked for one, which would make the body invalid.
      const decoded = characters.byteLength <= maxTextLength ? decodeBase64Ascii(characters) : undefined
      if (decoded === undefined && holdsControl(characters)) return parse(bytes, maxDepth)
      pieces.push(bytes.toString("latin1", copied, open + 1), `\\u0001${literals.length}`)
      literals.push({ start: open + 1, end: close, decoded })
      copied = close
    }
    open = bytes.indexOf(0x22, close + 1)
  }
  if (literals.length === 0) return parse(bytes, maxDepth)
  pieces.push(bytes.toString("latin1", copied))
  return Effect.flatMap(
    parse(Buffer.from(pieces.join(""), "latin1"), maxDepth),
    (value) => restore(value, literals, bytes) ? Effect.succeed(value) : parse(bytes, maxDepth)
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
