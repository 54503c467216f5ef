/**
 * JSON request bodies read by our own rules instead of the platform's: a
 * per-route byte limit answered without cutting the connection, JSON as the
 * only media type, strict UTF-8, and a bounded nesting depth.
 *
 * The platform reads a body with a byte limit by destroying the request stream
 * once the limit is passed, which destroys the socket: the client sees a reset
 * instead of an answer. Here a body over the limit is never destroyed: when its
 * declared length is already too large it is not read at all (Node discards the
 * rest once the response is written, keeping the connection), and a chunked one
 * is drained without being kept, so the client that is still sending reads a
 * complete answer.
 */
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Schema } from "effect"
import type { IncomingMessage } from "node:http"
import { OneShot } from "../../services/common/OneShot.js"
import { quote } from "./Failures.js"

/** Why a body was refused; knows no HTTP status (each API maps it to its own envelope). */
export class BodyRefused extends Schema.TaggedError<BodyRefused>()("BodyRefused", {
  reason: Schema.Literal("too-large", "media-type", "encoding", "syntax", "too-deep", "unreadable", "character"),
  message: Schema.String,
  /** The route's limit, when the body was too large. */
  limitBytes: Schema.optional(Schema.Number),
  /** Where in the body a refused character is (dotted keys and indexes), for `character`. */
  path: Schema.optional(Schema.String)
}) {}

export interface BodyRules {
  /** Bytes on the wire, before decoding. */
  readonly limitBytes: number
  /** Nesting of arrays and objects, the body itself being level 1. */
  readonly maxDepth: number
  /** A route's own reader, answering as `readJson` does (the artifact chunk route's: src/node/http/ChunkBody.ts). */
  readonly read?: (source: IncomingMessage, rules: BodyRules) => Effect.Effect<unknown, BodyRefused>
}

/**
 * A body this far past the limit is not drained: the connection is cut once the
 * answer is written (a client may see a reset then). Draining costs the node only
 * reading and dropping bytes, so the bound is generous.
 */
const maxDrainBytes = 64 * 1024 * 1024

/** `application/json`, optionally with a UTF-8 charset: the only media type a JSON route reads. */
const jsonMediaType = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i

const refused = (reason: BodyRefused["reason"], message: string, limitBytes?: number) =>
  new BodyRefused({ reason, message, ...(limitBytes === undefined ? {} : { limitBytes }) })

/**
 * Whether a string holds no UTF-16 code unit that is half of no pair (JSON's `\ud800`
 * escape makes one, and no UTF-8 consumer can store it). Node 20 has
 * `String.prototype.isWellFormed`, free on one-byte strings, though the ES2022 lib
 * does not declare it; a regular expression took 13 ms on a 35 MiB base64 body.
 */
const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed()

/**
 * What makes text unfit to keep, whatever the database: U+0000 (PostgreSQL refuses it in
 * text, SQLite and C-string consumers cut the value there) or a lone surrogate.
 */
export const unfitCharacter = (text: string): "a NUL character" | "a lone surrogate" | undefined =>
  text.includes("\u0000") ? "a NUL character" : wellFormed(text) ? undefined : "a lone surrogate"

const characterRefused = (what: string, path: string) =>
  new BodyRefused({
    reason: "character",
    message: path === "" ? `The request body contains ${what}` : `The request body contains ${what} at ${path}`,
    path
  })

const tooLarge = (limitBytes: number) =>
  refused("too-large", `The request body is larger than this route's limit of ${limitBytes} bytes`, limitBytes)

const tooDeep = (maxDepth: number) =>
  refused("too-deep", `The request body is nested deeper than ${maxDepth} levels`)

/** Lets the rest of a refused body flow into nothing; past `maxDrainBytes` the connection is cut. */
const drain = (source: IncomingMessage, alreadyRead: number) => {
  let bytes = alreadyRead
  source.on("data", (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes > maxDrainBytes) source.destroy()
  })
  source.resume()
}

/** The body's bytes, at most `limitBytes` of them; a longer body is drained and refused. */
const readBytes = (source: IncomingMessage, limitBytes: number) =>
  Effect.async<Buffer, BodyRefused>((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > limitBytes) {
        cleanup()
        drain(source, bytes)
        resume(Effect.fail(tooLarge(limitBytes)))
      } else {
        chunks.push(chunk)
      }
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(refused("unreadable", "The request body could not be read")))
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

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** A position in the body, as a linked list to its root: paths are built only for a refusal. */
interface At {
  readonly key: string | number
  readonly parent: At | undefined
}

const pathOf = (at: At | undefined): string => {
  const keys: Array<string | number> = []
  for (let current = at; current !== undefined; current = current.parent) {
    keys.push(typeof current.key === "number" ? current.key : quote(current.key))
  }
  return keys.reverse().join(".")
}

/**
 * Arrays and objects deeper than `maxDepth`, or a NUL or lone surrogate in any
 * string or key. Iterative, so a hostile depth cannot overflow the stack here;
 * every decoder and formatter after it walks recursively, hence the bound.
 */
const inspect = (value: unknown, maxDepth: number): BodyRefused | undefined => {
  const stack: Array<readonly [unknown, number, At | undefined]> = [[value, 1, undefined]]
  while (stack.length > 0) {
    const [current, depth, at] = stack.pop()!
    if (typeof current === "string") {
      const what = unfitCharacter(current)
      if (what !== undefined) return characterRefused(what, pathOf(at))
    } else if (typeof current === "object" && current !== null) {
      if (depth > maxDepth) return tooDeep(maxDepth)
      if (Array.isArray(current)) {
        current.forEach((item, index) => stack.push([item, depth + 1, { key: index, parent: at }]))
      } else {
        for (const [key, item] of Object.entries(current)) {
          const what = unfitCharacter(key)
          if (what !== undefined) return characterRefused(what, pathOf(at))
          stack.push([item, depth + 1, { key, parent: at }])
        }
      }
    }
  }
  return undefined
}

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, found
 * before parsing: V8 parses a megabyte of `[[[…]]]` in about a second, thirty
 * times what a megabyte of ordinary JSON costs. Strings are skipped with
 * `indexOf`, so a body that is mostly one base64 string costs next to nothing.
 * Text that is not JSON may be misjudged; the parser refuses it anyway.
 */
export const nestedDeeperThan = (text: string, maxDepth: number): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // The closing quote: the next one not escaped by an odd run of backslashes.
      for (;;) {
        const close = text.indexOf("\"", i + 1)
        if (close === -1) return false
        let backslashes = 0
        while (text.charCodeAt(close - 1 - backslashes) === 0x5C) backslashes++
        i = close
        if (backslashes % 2 === 0) break
      }
    } else if (c === 0x5B || c === 0x7B) {
      if (++depth > maxDepth) return true
    } else if (c === 0x5D || c === 0x7D) {
      depth--
    }
  }
  return false
}

/** Bytes to a JSON value; an empty body is `{}`, so a route whose fields are all optional takes no body. */
export const parse = (bytes: Uint8Array, maxDepth: number): Effect.Effect<unknown, BodyRefused> => {
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Effect.fail(refused("encoding", "The request body is not valid UTF-8"))
  }
  if (text.charCodeAt(0) === 0xFEFF) return Effect.fail(refused("encoding", "The request body starts with a byte order mark"))
  if (text.trim() === "") return Effect.succeed({})
  if (nestedDeeperThan(text, maxDepth)) return Effect.fail(tooDeep(maxDepth))
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // V8's message quotes the input; the client has it already.
    return Effect.fail(refused("syntax", "The request body is not valid JSON"))
  }
  // Only a `\u` escape can put a NUL or a lone surrogate into the parsed value: JSON refuses a raw control
  // character in a string, and the strict UTF-8 decoding above admits no surrogate. The depth was checked on the
  // text. So a body without one (nearly every body) needs no walk of its parsed value.
  if (!text.includes("\\u")) return Effect.succeed(value)
  const problem = inspect(value, maxDepth)
  return problem === undefined ? Effect.succeed(value) : Effect.fail(problem)
}

const contentLength = (source: IncomingMessage): number | undefined => {
  const header = source.headers["content-length"]
  return header === undefined ? undefined : Number(header)
}

/** The checked JSON body of a Node request under `rules`. */
export const readJson = (source: IncomingMessage, rules: BodyRules): Effect.Effect<unknown, BodyRefused> =>
  Effect.suspend(() => {
    const declared = contentLength(source)
    const empty = declared === 0 || (declared === undefined && source.headers["transfer-encoding"] === undefined)
    if (empty) return Effect.succeed({})
    const mediaType = source.headers["content-type"]
    if (mediaType === undefined || !jsonMediaType.test(mediaType)) {
      drain(source, 0)
      return Effect.fail(refused("media-type", "The request body must be application/json (UTF-8)"))
    }
    // Refused before reading; the bytes still arriving are dropped, so the connection stays usable.
    if (declared !== undefined && declared > rules.limitBytes) {
      drain(source, 0)
      return Effect.fail(tooLarge(rules.limitBytes))
    }
    return Effect.flatMap(readBytes(source, rules.limitBytes), (bytes) => parse(bytes, rules.maxDepth))
  })

/**
 * `effect` run at most once, by its first caller; every caller gets that outcome. A hand-made `Effect.cached`:
 * that one has to be run (`runSync`) to be made, a fiber and a synchronized ref per request for a body most routes
 * read once. The outcome is a OneShot, not a Deferred (services/common/OneShot.ts says why), set however the first
 * read ends, an interrupted one too, so a caller waiting beside it is never left waiting.
 */
const once = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let outcome: OneShot<A, E> | undefined
  return Effect.suspend(() => {
    if (outcome !== undefined) return outcome.wait()
    const cell = new OneShot<A, E>()
    outcome = cell
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.exit(restore(effect)), (exit) => {
        cell.done(exit)
        return exit
      })
    )
  })
}

/**
 * The request with its body read by `readJson`, once, whatever way a route asks
 * for it. A refusal is a defect of the body effect (HttpApi dies on body failures
 * anyway), found by the error mapping in the cause. Everything else, the Node
 * request and response included, is the request's own, so streaming responses and
 * socket access keep working: the body's readers are set on the request itself
 * (own properties over its class's getters), which is this request's alone. An
 * object delegating to it (`Object.create(request, ...)`) made V8 turn every
 * request into a prototype, several microseconds per POST.
 */
export const guarded = (
  request: HttpServerRequest.HttpServerRequest,
  rules: BodyRules
): HttpServerRequest.HttpServerRequest => {
  const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage | undefined
  if (source === undefined) return request
  const json = once(Effect.orDie((rules.read ?? readJson)(source, rules)))
  const notJson = Effect.zipRight(
    json,
    // Built only when a route reads such a body: an error captures a stack trace, a cost every request would pay.
    Effect.dieSync(() => refused("media-type", "The request body must be application/json (UTF-8)"))
  )
  // Configurable, so a second guard of the same request (none today) would replace these rather than throw.
  return Object.defineProperties(request, {
    json: { value: json, configurable: true },
    text: { value: Effect.map(json, (value) => JSON.stringify(value)), configurable: true },
    urlParamsBody: { value: notJson, configurable: true },
    arrayBuffer: { value: notJson, configurable: true },
    multipart: { value: notJson, configurable: true }
  })
}
