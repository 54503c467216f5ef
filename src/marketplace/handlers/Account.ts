/**
 * Account and curation routes. Credentials are not issued yet (see the
 * credentials issue), so every credential is refused as unknown and the
 * handlers behind it answer 501 until they are built.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotImplemented, Unauthorized } from "../../../schema/marketplace/Errors.js"
import { Authentication } from "../../../schema/marketplace/Security.js"

const refuse = (credential: Redacted.Redacted) =>
  Effect.fail(
    new Unauthorized({
      message: Redacted.value(credential).length === 0 ? "A credential is required" : "The credential is not valid"
    })
  )

export const AuthenticationLive = Layer.succeed(Authentication, Authentication.of({ bearer: refuse, cookie: refuse }))

const notYet = () => Effect.fail(new NotImplemented({ message: "Not implemented yet" }))

export const AccountLive = HttpApiBuilder.group(MarketplaceApi, "account", (handlers) =>
  handlers.handle("me", notYet).handle("deleteMe", notYet).handle("myPackages", notYet))

export const CurationLive = HttpApiBuilder.group(MarketplaceApi, "curation", (handlers) =>
  handlers
    .handle("setStatus", notYet)
    .handle("setFeatured", notYet)
    .handle("collection", notYet)
    .handle("collectionCommand", notYet))
