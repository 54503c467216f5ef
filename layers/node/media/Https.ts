/**
 * One media fetch over node:https: redirects followed by hand and checked,
 * every connection fresh and dialled only at an address the policy allows.
 *
 * Plain node requests rather than fetch or the platform HttpClient: every
 * byte sent must be ours (no cookie jar, no authorization, no Referer, no
 * content decoding, no redirect following, no pooled connection) and the
 * address check has to sit in the connection's own `lookup`, so a name that
 * changes its answer between a check and the connect cannot slip through.
 */
import { Effect, Either, Exit } from "effect"
import * as https from "node:https"
import type * as net from "node:net"
import { mediaRefused, type MediaRefused } from "../../../services/node/MediaFetcher.js"
import {
  type AudioType,
  checkRedirect,
  isAudioType,
  isIdentityEncoding,
  isPublicAddress,
  localhostAddresses,
  maxMediaBytes,
  maxRedirects,
  mediaTypeOf
} from "./Policy.js"
import type { MediaResolver, ResolvedAddress } from "./Resolver.js"

export interface TransportOptions {
  /**
   * Trusted certificate authorities, replacing Node's bundled roots (tests
   * pass their self-signed certificate here). Unset: Node's roots.
   */
  readonly ca?: string | Buffer | Array<string | Buffer> | undefined
  /**
   * Tests only: where an allowed (public) answer is really dialled, so a test
   * can stand a local server in for a public host. The policy checks the
   * resolver's answer before this mapping. Never set in production.
   */
  readonly dialVia?: ((allowed: ResolvedAddress) => ResolvedAddress) | undefined
}

export interface Audio {
  readonly declared: AudioType
  readonly bytes: Uint8Array
  /** The URL that answered (after redirects). */
  readonly url: URL
}

type Hop =
  | { readonly _tag: "Redirect"; readonly location: string }
  | { readonly _tag: "Audio"; readonly declared: AudioType; readonly bytes: Uint8Array }

const redirectStatuses = new Set([301, 302, 303, 307, 308])

/** The answer a name's lookup gets when one of its addresses may not be dialled. */
class AddressRefused extends Error {
  constructor(readonly hostname: string) {
    super(`${hostname} resolves to an address that may not be dialled`)
  }
}

const lookupFailure = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`lookup failed: ${code}`), { code })

/**
 * The `lookup` of every media connection: asks the resolver (never for
 * `localhost`, which names the loopback addresses), refuses the whole answer
 * when any address is not public, and hands Node exactly the checked addresses.
 * Node does not call it for a host written as an address: such an origin
 * names its address and is allowed as written.
 */
export const guardedLookup = (
  resolver: MediaResolver["Type"],
  dialVia: TransportOptions["dialVia"]
): net.LookupFunction =>
(hostname, options, callback) => {
  const answer = hostname === "localhost"
    ? Effect.succeed(localhostAddresses)
    : resolver.resolve(hostname).pipe(
      Effect.mapError((failure): Error => lookupFailure(failure.code)),
      Effect.filterOrFail(
        (addresses) => addresses.length > 0 && addresses.every((entry) => isPublicAddress(entry.address)),
        (addresses): Error => addresses.length === 0 ? lookupFailure("ENOTFOUND") : new AddressRefused(hostname)
      ),
      Effect.map((addresses) => (dialVia === undefined ? addresses : addresses.map(dialVia)))
    )
  Effect.runCallback(Effect.either(answer), {
    onExit: (exit) => {
      const result = Exit.isSuccess(exit) ? exit.value : Either.left(lookupFailure("EAI_FAIL"))
      if (Either.isLeft(result)) return callback(result.left, "", 4)
      const wanted = options.family === 4 || options.family === 6
        ? result.right.filter((entry) => entry.family === options.family)
        : result.right
      if (wanted.length === 0) return callback(lookupFailure("ENOTFOUND"), "", 4)
      if (options.all === true) return callback(null, wanted.map(({ address, family }) => ({ address, family })))
      return callback(null, wanted[0]!.address, wanted[0]!.family)
    }
  })
}

const requestFailure = (error: unknown, url: URL): MediaRefused =>
  error instanceof AddressRefused
    ? mediaRefused("private-address", `${url.hostname} resolves to a loopback, private, link-local or reserved address`)
    : mediaRefused(
      "fetch-failed",
      `The media server at ${url.origin} could not be reached (${String((error as NodeJS.ErrnoException)?.code ?? "error")})`
    )

const hop = (url: URL, lookup: net.LookupFunction, options: TransportOptions): Effect.Effect<Hop, MediaRefused> =>
  Effect.async<Hop, MediaRefused>((resume) => {
    let settled = false
    const request = https.request(url, {
      method: "GET",
      // A fresh connection for this request alone: no pooled socket, no session reuse.
      agent: false,
      lookup,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      headers: {
        accept: "audio/mpeg, audio/ogg, audio/wav, audio/webm",
        "accept-encoding": "identity",
        "user-agent": "clark-node (media)"
      }
    })
    const settle = (result: Either.Either<Hop, MediaRefused>) => {
      if (settled) return
      settled = true
      // A refusal or a redirect reads nothing more: drop the connection now.
      if (Either.isLeft(result) || result.right._tag === "Redirect") request.destroy()
      resume(Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left))
    }
    const refuse = (refusal: MediaRefused) => settle(Either.left(refusal))

    request.on("error", (error) => refuse(requestFailure(error, url)))
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      if (status === 404 || status === 410) {
        return refuse(mediaRefused("not-found", `The media server at ${url.origin} has no such file (${status})`))
      }
      if (redirectStatuses.has(status)) {
        const location = response.headers.location
        if (location === undefined || location === "") {
          return refuse(mediaRefused("fetch-failed", `The media server answered ${status} without a location`))
        }
        return settle(Either.right({ _tag: "Redirect", location }))
      }
      if (status !== 200) {
        return refuse(mediaRefused("fetch-failed", `The media server at ${url.origin} answered ${status}`))
      }
      const declared = mediaTypeOf(response.headers["content-type"])
      if (!isAudioType(declared)) {
        return refuse(mediaRefused("type-not-allowed", "The declared type is not audio/mpeg, audio/ogg, audio/wav or audio/webm"))
      }
      if (!isIdentityEncoding(response.headers["content-encoding"], response.headers["transfer-encoding"])) {
        return refuse(mediaRefused("type-mismatch", "The media server sent a compressed transfer"))
      }
      const declaredLength = Number(response.headers["content-length"] ?? Number.NaN)
      if (declaredLength > maxMediaBytes) {
        return refuse(mediaRefused("too-large", `The file is larger than ${maxMediaBytes} bytes`))
      }
      const chunks: Array<Buffer> = []
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        // Stop reading at once: the rest of an oversized body is never buffered.
        if (received > maxMediaBytes) return refuse(mediaRefused("too-large", `The file is larger than ${maxMediaBytes} bytes`))
        chunks.push(chunk)
      })
      response.on("error", (error) => refuse(requestFailure(error, url)))
      response.on("end", () => {
        if (!response.complete) return refuse(mediaRefused("fetch-failed", "The media server closed the connection early"))
        const bytes = Buffer.concat(chunks)
        settle(Either.right({ _tag: "Audio", declared, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) }))
      })
    })
    request.end()
    return Effect.sync(() => request.destroy())
  })

/**
 * Fetches `start` (already checked against the origins), following at most
 * three redirects, each checked before it is dialled. No time limit here: the
 * caller bounds the whole fetch.
 */
export const fetchAudio = (
  start: URL,
  resolver: MediaResolver["Type"],
  options: TransportOptions
): Effect.Effect<Audio, MediaRefused> => {
  const lookup = guardedLookup(resolver, options.dialVia)
  const follow = (url: URL, redirects: number): Effect.Effect<Audio, MediaRefused> =>
    Effect.flatMap(hop(url, lookup, options), (answer) => {
      if (answer._tag === "Audio") return Effect.succeed({ declared: answer.declared, bytes: answer.bytes, url })
      if (redirects >= maxRedirects) {
        return Effect.fail(mediaRefused("too-many-redirects", `The media server redirected more than ${maxRedirects} times`))
      }
      return Either.match(checkRedirect(answer.location, url), {
        onLeft: Effect.fail,
        onRight: (next) => follow(next, redirects + 1)
      })
    })
  return follow(start, 0)
}
