/** Scope checks on the credential that authenticated the request. */
import { Effect } from "effect"
import type { Scope } from "../../../schema/marketplace/Account.js"
import { Forbidden } from "../../../schema/marketplace/Errors.js"
import { CurrentCredential } from "../../../schema/marketplace/Security.js"

/** The current credential, when it holds `scope`; 403 `forbidden` otherwise. */
export const requireScope = (scope: Scope) =>
  Effect.flatMap(CurrentCredential, (credential) =>
    credential.scopes.includes(scope)
      ? Effect.succeed(credential)
      : Effect.fail(new Forbidden({ message: `This needs the scope ${scope}` })))
