/**
 * Plain GETs against the registry, each body read within a byte limit as it streams: a registry (or a
 * tarball URL) that sends more than a package may be is cut off at the limit, never buffered whole first.
 */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { type Duration, Effect, Stream } from "effect"
import { RegistryUnavailable } from "../../services/registry/RegistryErrors.js"

export type Stage = RegistryUnavailable["stage"]

export interface Fetched {
  readonly status: number
  readonly body: Buffer
}

/** Says what a transport failure was without the URL, which may carry the registry's credentials. */
const transportProblem = (cause: unknown): string => {
  const error = cause as { readonly _tag?: string; readonly reason?: string; readonly cause?: { readonly code?: string; readonly cause?: { readonly code?: string } } }
  const code = error?.cause?.code ?? error?.cause?.cause?.code
  return code !== undefined ? `connection failed (${code})` : `request failed (${error?._tag ?? "unknown"}${error?.reason ? `: ${error.reason}` : ""})`
}

export interface Get<E> {
  readonly name: string
  readonly stage: Stage
  readonly url: string
  readonly accept: string
  /** Bytes beyond this many fail with `tooLarge` as soon as they arrive. */
  readonly limit: number
  readonly tooLarge: () => Effect.Effect<never, E>
  readonly timeout: Duration.DurationInput
  /** Sees every chunk as it arrives (the tarball is hashed while it downloads). */
  readonly onChunk?: (chunk: Uint8Array) => void
}

export const get = <E>(options: Get<E>) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const unavailable = (problem: string, status?: number) =>
      new RegistryUnavailable({ name: options.name, stage: options.stage, problem, ...(status === undefined ? {} : { status }) })
    const response: HttpClientResponse.HttpClientResponse = yield* client.execute(
      HttpClientRequest.get(options.url).pipe(HttpClientRequest.setHeader("accept", options.accept))
    ).pipe(
      // A kept-alive connection the registry closed while idle fails the first write (seen as ECONNRESET
      // between installs); a GET asked once more on a new connection is safe. No body was read yet.
      Effect.retry({ times: 1, while: (error) => error._tag === "RequestError" }),
      Effect.mapError((cause) => unavailable(transportProblem(cause)))
    )
    // A 404's body is not read: only the status matters, and an error page is not a package.
    if (response.status < 200 || response.status >= 300) return { status: response.status, body: Buffer.alloc(0) } satisfies Fetched
    const declared = Number(response.headers["content-length"])
    if (Number.isFinite(declared) && declared > options.limit) return yield* options.tooLarge()
    // A declared length within the limit, not content-encoded, is read in one piece: HTTP/1.1 framing ends
    // the body at that length (more bytes are a protocol error, not more body), and the per-chunk stream costs
    // a packument or a small tarball more CPU than the request itself (bench:indexer, docs/benchmarks.md). An
    // encoded body might be decoded by a client to more than it declared, so it is counted as it streams.
    const encoding = response.headers["content-encoding"]
    if (response.headers["content-length"] !== undefined && Number.isFinite(declared) && (encoding === undefined || encoding === "identity")) {
      const whole = new Uint8Array(yield* response.arrayBuffer.pipe(Effect.mapError((cause) => unavailable(transportProblem(cause)))))
      if (whole.byteLength > options.limit) return yield* options.tooLarge()
      options.onChunk?.(whole)
      return { status: response.status, body: Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength) } satisfies Fetched
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    yield* response.stream.pipe(
      Stream.mapError((cause) => unavailable(transportProblem(cause))),
      Stream.runForEach((chunk) => {
        size += chunk.byteLength
        if (size > options.limit) return options.tooLarge()
        chunks.push(chunk)
        options.onChunk?.(chunk)
        return Effect.void
      })
    )
    return { status: response.status, body: Buffer.concat(chunks, size) } satisfies Fetched
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => new RegistryUnavailable({ name: options.name, stage: options.stage, problem: "timed out" })
    })
  )
