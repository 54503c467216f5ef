/** How account and curation routes authenticate. */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import type { Role, Scope } from "./Account.js"
import { ForbiddenWire, UnauthorizedWire } from "./Errors.js"

export const sessionCookieName = "app.session_token"

export interface Credential {
  readonly userId: string
  readonly role: Role
  readonly scopes: ReadonlyArray<Scope>
  readonly kind: "api-token" | "oauth" | "session"
  /** The audience an OAuth access token was issued for; the server accepts only its own API's. */
  readonly audience?: string | undefined
  /** Set when the credential came from the session cookie (cross-site checks apply). */
  readonly viaCookie: boolean
}

/** The credential that authenticated the current request. */
export class CurrentCredential extends Context.Tag("clark/marketplace/CurrentCredential")<
  CurrentCredential,
  Credential
>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(UnauthorizedWire, ForbiddenWire),
  provides: CurrentCredential,
  security: {
    bearer: HttpApiSecurity.bearer,
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName })
  }
}) {}
