/**
 * Account and curation routes. Credentials are checked by `Credentials`
 * (bearer API or session token, or the session cookie); GET /me answers the
 * profile with the scopes of the current credential. DELETE /me, /me/packages
 * and curation answer 501 until they are built.
 */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { Forbidden, NotImplemented, Unauthorized } from "../../../schema/marketplace/Errors.js"
import { Authentication, CurrentCredential } from "../../../schema/marketplace/Security.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"

const required = () => new Unauthorized({ message: "A credential is required" })
const notValid = () => new Unauthorized({ message: "The credential is not valid" })

/**
 * Whether the request carried an Authorization header. The middleware tries
 * the bearer first and falls back to the cookie, so the cookie check decides
 * the final answer: a presented but refused bearer is never rescued by a
 * cookie, and is reported as invalid rather than missing.
 */
const bearerPresented = Effect.map(
  Effect.serviceOption(HttpServerRequest.HttpServerRequest),
  Option.exists((request) => (request.headers["authorization"] ?? "").trim().length > 0)
)

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Credentials, (credentials) => {
    const check = (token: Redacted.Redacted, via: "bearer" | "cookie") =>
      Redacted.value(token).length === 0
        ? Effect.fail(required())
        : Effect.flatMap(
          credentials.authenticate(token, via),
          Option.match({ onNone: () => Effect.fail(notValid()), onSome: Effect.succeed })
        )
    return Authentication.of({
      bearer: (token) => check(token, "bearer"),
      cookie: (token) =>
        Effect.flatMap(
          bearerPresented,
          (presented) => presented ? Effect.fail(notValid()) : check(token, "cookie")
        )
    })
  })
)

const notYet = () => Effect.fail(new NotImplemented({ message: "Not implemented yet" }))

export const AccountLive = HttpApiBuilder.group(MarketplaceApi, "account", (handlers) =>
  Effect.map(Credentials, (credentials) =>
    handlers
      .handle("me", () =>
        Effect.gen(function*() {
          const credential = yield* CurrentCredential
          const profile = yield* credentials.profile(credential.userId)
          if (Option.isNone(profile)) return yield* Effect.fail(notValid())
          return { ...profile.value, scopes: credential.scopes }
        }))
      .handle("deleteMe", notYet)
      .handle("myPackages", notYet)))

/** Curation needs the scope packages:curate on the credential that authenticated the request. */
const curator = Effect.flatMap(CurrentCredential, (credential) =>
  credential.scopes.includes("packages:curate")
    ? Effect.void
    : Effect.fail(new Forbidden({ message: "This needs the scope packages:curate" })))

const curate = () => Effect.zipRight(curator, notYet())

export const CurationLive = HttpApiBuilder.group(MarketplaceApi, "curation", (handlers) =>
  handlers
    .handle("setStatus", curate)
    .handle("setFeatured", curate)
    .handle("collection", curate)
    .handle("collectionCommand", curate))
