/**
 * The credential check of account and curation routes: a bearer token (API,
 * OAuth or session) or the session cookie. A refused bearer is never rescued
 * by a cookie; OAuth tokens count only for this API's audience; a change made
 * with the cookie must come from the configured site.
 */
import { type Headers, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { Forbidden, Unauthorized } from "../../../schema/marketplace/Errors.js"
import { Authentication } from "../../../schema/marketplace/Security.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import { apiAudience, Settings, type SettingsShape } from "../Settings.js"

const required = () => new Unauthorized({ message: "A credential is required" })
const notValid = () => new Unauthorized({ message: "The credential is not valid" })

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** `Bearer `, cut from the header as the platform's bearer security does. */
const bearerPrefix = "Bearer "

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * Whether a request comes from the site's own pages: `Sec-Fetch-Site` when the
 * browser sent it, and the `Origin` (else the `Referer`'s origin) equal to the
 * site origin. A request that shows neither cannot prove where it came from.
 */
export const fromSite = (
  headers: Headers.Headers,
  settings: Pick<SettingsShape, "publicOrigin" | "siteOrigin">
): boolean => {
  const fetchSite = headers["sec-fetch-site"]
  const sameSiteAllowed = settings.siteOrigin !== settings.publicOrigin
  if (fetchSite !== undefined && fetchSite !== "same-origin" && !(sameSiteAllowed && fetchSite === "same-site")) {
    return false
  }
  const origin = headers["origin"] ?? (headers["referer"] === undefined ? undefined : originOf(headers["referer"]))
  return origin === settings.siteOrigin
}

const currentRequest = Effect.serviceOption(HttpServerRequest.HttpServerRequest)

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const settings = yield* Settings
    const audience = apiAudience(settings)

    const check = (token: Redacted.Redacted, via: "bearer" | "cookie") =>
      Effect.gen(function*() {
        const found = yield* credentials.authenticate(token, via).pipe(
          Effect.catchTag("AccountSuspended", () => new Forbidden({ message: "The account is suspended" }))
        )
        if (Option.isNone(found)) return yield* notValid()
        if (found.value.kind === "oauth" && found.value.audience !== audience) {
          // Said plainly: an audience mismatch is a configuration problem (MARKETPLACE_PUBLIC_ORIGIN, or the
          // issuer's), not a bad token, and neither audience is a secret.
          return yield* new Unauthorized({
            message: `The OAuth access token is for ${found.value.audience}, not for this API (${audience})`
          })
        }
        return found.value
      })

    return Authentication.of({
      bearer: (token) => check(token, "bearer"),
      // The middleware tries the bearer first and falls back to the cookie, so this
      // decides the answer when neither carried a credential.
      cookie: (token) =>
        Effect.gen(function*() {
          const request = yield* currentRequest
          const authorization = Option.match(request, { onNone: () => "", onSome: (r) => r.headers["authorization"] ?? "" })
          // The bearer was refused already; its own reason (an audience, say) is the answer, not the cookie's.
          if (authorization.trim().length > 0) return yield* check(Redacted.make(authorization.slice(bearerPrefix.length)), "bearer")
          if (Redacted.value(token).length === 0) return yield* required()
          const credential = yield* check(token, "cookie")
          const permitted = Option.exists(request, (r) => safeMethods.has(r.method) || fromSite(r.headers, settings))
          if (!permitted) {
            return yield* new Forbidden({ message: `Changes made with the session cookie must come from ${settings.siteOrigin}` })
          }
          return credential
        })
    })
  })
)
