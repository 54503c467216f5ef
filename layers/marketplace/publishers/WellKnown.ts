/**
 * The homepage's well-known file, fetched the way a server fetching a URL a user named must: over https
 * only, every connection fresh (`agent: false`) and dialled only at a public address, checked in the
 * connection's own `lookup` so a name cannot change its answer between the check and the connect; a host
 * written as an address checked as written; redirects followed by hand, at most 3, and only on the same
 * host (a redirect elsewhere would let any site that redirects prove any domain); the body read up to 4 KiB
 * and the connection dropped beyond; 10 seconds for the whole check. Always port 443 (see `wellKnownUrl`).
 */
import { Duration, Effect, Either, Exit } from "effect"
import * as https from "node:https"
import type * as net from "node:net"
import { isIP } from "node:net"
import { isPublicAddress } from "../../node/media/Policy.js"
import { fileHoldsToken, VerificationFailed, wellKnownUrl } from "../../../services/marketplace/Publishers.js"
import type { PublisherResolver, ResolvedAddress } from "./Resolver.js"

export interface WellKnownOptions {
  readonly resolver: PublisherResolver["Type"]
  /** Trusted certificate authorities replacing Node's (tests pass their self-signed certificate). */
  readonly ca?: string | undefined
  /**
   * Tests only: where an allowed (public) answer is really dialled, so a local server stands in for a
   * public host. The address is checked before this mapping. Never set in production.
   */
  readonly dialVia?: ((allowed: ResolvedAddress) => ResolvedAddress) | undefined
  /** Tests only: the port really dialled instead of 443 (a local server cannot listen there). */
  readonly dialPort?: number | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

export const maxBodyBytes = 4096
export const maxRedirects = 3
export const checkTimeout = Duration.seconds(10)

const method = "well-known" as const
const failed = (problem: string) => new VerificationFailed({ method, problem })

class Refused extends Error {}

const lookupWith = (options: WellKnownOptions): net.LookupFunction => (hostname, lookupOptions, callback) => {
  const answer = options.resolver.lookup(hostname).pipe(
    Effect.mapError((code): Error => Object.assign(new Error(`lookup failed: ${code}`), { code })),
    Effect.filterOrFail(
      (addresses) => addresses.length > 0 && addresses.every((entry) => isPublicAddress(entry.address)),
      (): Error => new Refused(`${hostname} resolves to a loopback, private, link-local or reserved address`)
    ),
    Effect.map((addresses) => (options.dialVia === undefined ? addresses : addresses.map(options.dialVia)))
  )
  Effect.runCallback(Effect.either(answer), {
    onExit: (exit) => {
      const result = Exit.isSuccess(exit) ? exit.value : Either.left(new Error("lookup failed"))
      if (Either.isLeft(result)) return callback(result.left, "", 4)
      const wanted = lookupOptions.family === 4 || lookupOptions.family === 6
        ? result.right.filter((entry) => entry.family === lookupOptions.family)
        : result.right
      if (wanted.length === 0) return callback(Object.assign(new Error("no address"), { code: "ENOTFOUND" }), "", 4)
      if (lookupOptions.all === true) return callback(null, wanted.map(({ address, family }) => ({ address, family })))
      return callback(null, wanted[0]!.address, wanted[0]!.family)
    }
  })
}

type Hop = { readonly _tag: "Redirect"; readonly location: string } | { readonly _tag: "Body"; readonly body: string }

const hop = (url: URL, options: WellKnownOptions): Effect.Effect<Hop, VerificationFailed> =>
  Effect.async<Hop, VerificationFailed>((resume) => {
    let settled = false
    const request = https.request(url, {
      method: "GET",
      agent: false,
      lookup: lookupWith(options),
      ...(options.dialPort === undefined ? {} : { port: options.dialPort }),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      headers: { accept: "text/plain", "accept-encoding": "identity", "user-agent": "clark-marketplace (publisher verification)" }
    })
    const settle = (result: Either.Either<Hop, VerificationFailed>) => {
      if (settled) return
      settled = true
      request.destroy()
      resume(Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left))
    }
    request.on("error", (error) =>
      settle(Either.left(failed(
        error instanceof Refused
          ? error.message
          : `${url.origin} could not be reached (${String((error as NodeJS.ErrnoException).code ?? "error")})`
      ))))
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      if ([301, 302, 303, 307, 308].includes(status)) {
        const location = response.headers.location
        return settle(location === undefined ? Either.left(failed(`${url.href} redirected without a Location`)) : Either.right({ _tag: "Redirect", location }))
      }
      if (status !== 200) return settle(Either.left(failed(`${url.href} answered ${status}`)))
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBodyBytes) return settle(Either.left(failed(`${url.href} holds more than ${maxBodyBytes} bytes`)))
        chunks.push(chunk)
      })
      response.on("end", () => settle(Either.right({ _tag: "Body", body: Buffer.concat(chunks).toString("utf8") })))
      response.on("error", () => settle(Either.left(failed(`${url.href} broke off`))))
    })
    request.end()
    return Effect.sync(() => request.destroy())
  })

/** A host written as an address is dialled as written, without a lookup: it has to be public itself. */
const literalRefused = (url: URL): boolean => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return isIP(host) !== 0 && !isPublicAddress(host)
}

/** Fetches the homepage's well-known file and fails unless a line of it is the token. */
export const checkWellKnown = (options: WellKnownOptions) => (homepage: URL, token: string) =>
  Effect.gen(function*() {
    let url = wellKnownUrl(homepage)
    for (let redirects = 0; ; redirects++) {
      if (url.protocol !== "https:") return yield* failed(`${url.href} is not https`)
      if (literalRefused(url)) return yield* failed(`${url.hostname} is a loopback, private, link-local or reserved address`)
      const answer = yield* hop(url, options)
      if (answer._tag === "Body") {
        if (fileHoldsToken(answer.body, token)) return
        return yield* failed(`${url.href} does not hold the token on a line of its own`)
      }
      if (redirects === maxRedirects) return yield* failed(`more than ${maxRedirects} redirects from ${wellKnownUrl(homepage).href}`)
      const next = URL.canParse(answer.location, url.href) ? new URL(answer.location, url) : undefined
      if (next === undefined) return yield* failed(`${url.href} redirected to an unreadable Location`)
      if (next.hostname !== homepage.hostname || next.port !== "") {
        return yield* failed(`${url.href} redirected to another host or port (${next.host}); the file must be served by ${homepage.hostname}`)
      }
      url = next
    }
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout ?? checkTimeout,
      onTimeout: () => failed(`${wellKnownUrl(homepage).href} did not answer within ${Duration.format(options.timeout ?? checkTimeout)}`)
    })
  )
