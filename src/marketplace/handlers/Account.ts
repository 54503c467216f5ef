/**
 * Account routes: the profile with the scopes of the current credential, the
 * listings of the caller's publishers, and deleting the account (signed-in
 * session only, idempotency key honoured).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { DeletedAccount } from "../../../schema/marketplace/Account.js"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { Conflict, Forbidden, Unauthorized } from "../../../schema/marketplace/Errors.js"
import { CurrentCredential } from "../../../schema/marketplace/Security.js"
import { AccountStore } from "../../../services/marketplace/Accounts.js"
import { Credentials } from "../../../services/marketplace/Credentials.js"
import { Idempotency, requestHash, withKey } from "../../../services/marketplace/Idempotency.js"
import { requireScope } from "./Scopes.js"

const gone = () => new Unauthorized({ message: "The credential is not valid" })

export const AccountLive = HttpApiBuilder.group(MarketplaceApi, "account", (handlers) =>
  Effect.gen(function*() {
    const credentials = yield* Credentials
    const accounts = yield* AccountStore
    const idempotency = yield* Idempotency
    return handlers
      .handle("me", () =>
        Effect.gen(function*() {
          const credential = yield* CurrentCredential
          const profile = yield* credentials.profile(credential.userId)
          if (Option.isNone(profile)) return yield* gone()
          return { ...profile.value, scopes: credential.scopes }
        }))
      .handle("deleteMe", ({ headers, payload }) =>
        Effect.gen(function*() {
          const credential = yield* CurrentCredential
          if (credential.kind !== "session") {
            return yield* new Forbidden({ message: "Deleting the account needs a signed-in session" })
          }
          const deletion = accounts.deleteAccount(credential.userId).pipe(
            Effect.catchTag("SoleOwner", ({ publishers }) =>
              new Conflict({
                message: `The account is the only owner of publishers with other members: ${publishers.join(", ")}`,
                details: { publishers }
              })),
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(gone()), onSome: Effect.succeed })),
            Effect.map((removed) => ({ deleted: true as const, removed }))
          )
          return yield* withKey(idempotency, headers["idempotency-key"], {
            userId: credential.userId,
            route: "DELETE /me",
            requestHash: requestHash("DELETE", "/me", payload)
          }, { success: DeletedAccount, failure: Schema.Union(Conflict, Unauthorized) }, deletion)
        }))
      .handle("myPackages", () =>
        Effect.gen(function*() {
          const credential = yield* requireScope("packages:read")
          return { items: yield* accounts.ownedListings(credential.userId) }
        }))
  }))
