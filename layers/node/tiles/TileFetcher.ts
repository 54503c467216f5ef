/**
 * `TileFetcher` over node:http / node:https. Plain node requests rather than
 * fetch or the platform HttpClient, because every byte sent must be ours:
 * no cookie jar, no Referer, no default headers, no redirect following, no
 * content decoding, and no tracing span that would record a URL holding the key.
 */
import { Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import { fileTypeFromBuffer } from "file-type"
import * as http from "node:http"
import * as https from "node:https"
import { maxTileBytes, tileContentTypes } from "../../../schema/node/Maps.js"
import type { Tile } from "../../../services/node/MapTiles.js"
import { TileFetcher, type TileRequest } from "../../../services/node/TileFetcher.js"
import { type TileFetchError, TileFetchFailed, TileMissing, TileRefused } from "../../../services/node/TileErrors.js"

export interface Options {
  /**
   * Trusted certificate authorities for https providers, replacing Node's defaults (tests, a private
   * provider). Unset: Node's bundled roots.
   */
  readonly ca?: string | Buffer | Array<string | Buffer> | undefined
  /** Whole request, from connecting to the last body byte. Default 10 s. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Largest tile body; default 512 KiB (the spec's limit). */
  readonly maxBytes?: number | undefined
  /** Parallel connections per provider host; default 6, as a browser would use. */
  readonly maxSockets?: number | undefined
}

export const defaultTimeout = Duration.seconds(10)

/** Providers such as OpenStreetMap ask clients to identify themselves. */
const userAgent = "clark-node (map tiles)"

type TileType = Tile["contentType"]

/** A refusal with its public message and a detail for the log (statuses, sizes, error codes: no URL). */
interface Refusal {
  readonly kind: "missing" | "failed" | "refused"
  readonly message: string
  readonly detail: string
}

const refusal = (kind: Refusal["kind"], message: string, detail: string = message): Refusal => ({
  kind,
  message,
  detail
})

const refusalError = {
  missing: (fields: { readonly reason: string }) => new TileMissing(fields),
  failed: (fields: { readonly reason: string }) => new TileFetchFailed(fields),
  refused: (fields: { readonly reason: string }) => new TileRefused(fields)
} satisfies Record<Refusal["kind"], (fields: { readonly reason: string }) => TileFetchError>

interface Answer {
  readonly declared: TileType
  readonly bytes: Uint8Array
}

/** The media type of a Content-Type header: lowercased, without parameters. */
const mediaTypeOf = (header: string | undefined) => header?.split(";")[0]?.trim().toLowerCase()

const isTileType = (type: string | undefined): type is TileType =>
  type !== undefined && (tileContentTypes as ReadonlyArray<string>).includes(type)

/**
 * The request target: the path, with the key as a query parameter when the policy says so, and the
 * headers, with the key as a header when it says so. Built from the parts rather than resolved as a URL
 * against the origin, so a template such as `//elsewhere/…` stays a path on the policy origin.
 */
const targetOf = (request: TileRequest) => {
  let path = request.path
  const headers: Record<string, string> = {
    accept: "image/png, image/webp",
    // Tiles are compressed images already; a gzip answer would fail the type check by bytes.
    "accept-encoding": "identity",
    "user-agent": userAgent
  }
  if (Option.isSome(request.credential)) {
    const credential = request.credential.value
    const value = Redacted.value(credential.value)
    if (credential.in === "header") {
      headers[credential.name.toLowerCase()] = value
    } else {
      const joiner = !path.includes("?") ? "?" : path.endsWith("?") || path.endsWith("&") ? "" : "&"
      path = `${path}${joiner}${encodeURIComponent(credential.name)}=${encodeURIComponent(value)}`
    }
  }
  return { path, headers }
}

interface Agents {
  readonly http: http.Agent
  readonly https: https.Agent
}

/** One GET; resolves with the checked-for-size body of a 2xx answer with a tile type, or a refusal. */
const get = (agents: Agents, request: TileRequest, maxBytes: number) =>
  Effect.async<Either.Either<Answer, Refusal>>((resume) => {
    const origin = new URL(request.origin)
    const secure = origin.protocol === "https:"
    const { path, headers } = targetOf(request)
    let settled = false
    let outgoing: http.ClientRequest | undefined
    const settle = (result: Either.Either<Answer, Refusal>) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(result))
    }
    const refuse = (response: http.IncomingMessage, failure: Refusal) => {
      // Destroying the response closes the socket: the rest of the body is never read.
      response.destroy()
      settle(Either.left(failure))
    }
    try {
      outgoing = (secure ? https : http).request(
        {
          protocol: origin.protocol,
          // URL keeps the brackets of an IPv6 literal; node:http wants the bare address.
          hostname: origin.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: origin.port === "" ? undefined : Number(origin.port),
          path,
          method: "GET",
          headers,
          agent: secure ? agents.https : agents.http
        },
        (response) => {
          const status = response.statusCode ?? 0
          if (status >= 300 && status < 400) {
            return refuse(
              response,
              refusal("refused", `The tile provider answered with a redirect (${status}); redirects are not followed`)
            )
          }
          if (status === 404 || status === 410) {
            return refuse(response, refusal("missing", `The tile provider has no such tile (${status})`))
          }
          if (status < 200 || status >= 300) {
            return refuse(response, refusal("failed", `The tile provider answered ${status}`))
          }
          const declared = mediaTypeOf(response.headers["content-type"])
          if (!isTileType(declared)) {
            return refuse(
              response,
              refusal(
                "refused",
                "The tile provider's answer is not declared as image/png or image/webp",
                `declared content type ${JSON.stringify((declared ?? "(none)").slice(0, 100))}`
              )
            )
          }
          const tooLarge = refusal("refused", `The tile is larger than ${maxBytes} bytes`)
          const declaredLength = Number(response.headers["content-length"] ?? Number.NaN)
          if (declaredLength > maxBytes) return refuse(response, tooLarge)
          // Counted as it arrives, whatever Content-Length said (or when it is absent).
          const chunks: Array<Buffer> = []
          let received = 0
          response.on("data", (chunk: Buffer) => {
            if (settled) return
            received += chunk.length
            if (received > maxBytes) return refuse(response, tooLarge)
            chunks.push(chunk)
          })
          response.on("end", () => {
            const bytes = new Uint8Array(received)
            let offset = 0
            for (const chunk of chunks) {
              bytes.set(chunk, offset)
              offset += chunk.length
            }
            settle(Either.right({ declared, bytes }))
          })
          const broken = (what: string) =>
            settle(Either.left(refusal("failed", "The tile provider's answer broke off", what)))
          response.on("error", (error: NodeJS.ErrnoException) => broken(`response error ${error.code ?? error.name}`))
          response.on("close", () => broken("connection closed before the end of the body"))
        }
      )
    } catch (error) {
      // node:http throws synchronously on a header value it cannot send; its message names the
      // header, not the value, but only the code is kept all the same.
      const code = (error as NodeJS.ErrnoException).code ?? "unknown"
      settle(Either.left(refusal("failed", "The tile request could not be made", `request refused by node: ${code}`)))
      return
    }
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      const code = error.code ?? error.name
      // HPE_*: node's HTTP parser refused the answer, e.g. bytes beyond the declared Content-Length.
      const message = code.startsWith("HPE_")
        ? "The tile provider's answer is not valid HTTP"
        : "The tile provider could not be reached"
      settle(Either.left(refusal("failed", message, `network error ${code}`)))
    })
    outgoing.end()
    return Effect.sync(() => outgoing?.destroy())
  })

/** The bytes must be what the provider declared: a png is not accepted as webp, html not as png. */
const checkBytes = (answer: Answer) =>
  Effect.promise(() => fileTypeFromBuffer(answer.bytes)).pipe(
    Effect.map((detected): Either.Either<Tile, Refusal> => {
      if (answer.bytes.length === 0) {
        return Either.left(refusal("refused", "The tile provider answered an empty body"))
      }
      // An animated PNG has the PNG signature and renders as a PNG; file-type names it apart.
      const actual = detected?.mime === "image/apng" ? "image/png" : detected?.mime
      if (actual !== answer.declared) {
        return Either.left(
          refusal(
            "refused",
            `The tile's bytes are not the ${answer.declared} the provider declared`,
            `declared ${answer.declared}, bytes ${actual ?? "unrecognised"} (${answer.bytes.length} bytes)`
          )
        )
      }
      return Either.right({ contentType: answer.declared, bytes: answer.bytes })
    })
  )

export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const timeout = options.timeout ?? defaultTimeout
    const maxBytes = options.maxBytes ?? maxTileBytes
    const maxSockets = options.maxSockets ?? 6
    // Keep-alive agents owned by the layer: a map view asks for many tiles of one provider in a row.
    const agents = yield* Effect.acquireRelease(
      Effect.sync((): Agents => ({
        http: new http.Agent({ keepAlive: true, maxSockets }),
        https: new https.Agent({ keepAlive: true, maxSockets, ...(options.ca === undefined ? {} : { ca: options.ca }) })
      })),
      (agents) =>
        Effect.sync(() => {
          agents.http.destroy()
          agents.https.destroy()
        })
    )
    const timedOut = refusal(
      "failed",
      `The tile provider did not answer within ${Duration.format(timeout)}`
    )
    return TileFetcher.of({
      fetch: (request) =>
        Effect.gen(function*() {
          const outcome = yield* get(agents, request, maxBytes).pipe(
            Effect.flatMap((answer) =>
              Either.isLeft(answer) ? Effect.succeed(Either.left(answer.left)) : checkBytes(answer.right)
            ),
            // On timeout the request is interrupted, which destroys the socket.
            Effect.timeoutTo({ duration: timeout, onTimeout: () => Either.left(timedOut), onSuccess: (result) => result })
          )
          if (Either.isRight(outcome)) return outcome.right
          const failure = outcome.left
          // A missing tile is ordinary (beyond a provider's coverage); the others are worth a look.
          yield* (failure.kind === "missing" ? Effect.logDebug : Effect.logWarning)("map tile fetch refused").pipe(
            Effect.annotateLogs({ kind: failure.kind, detail: failure.detail })
          )
          return yield* Effect.fail(refusalError[failure.kind]({ reason: failure.message }))
        })
    })
  })

export const layer = (options: Options = {}) => Layer.scoped(TileFetcher, make(options))
