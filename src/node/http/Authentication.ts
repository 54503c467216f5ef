/**
 * The node derives the surface of a request from how it arrived: the local
 * token alone is the cli-api surface; with the app secret it is the person's
 * own pages (and `x-app-channel: voice` is then a spoken message).
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { appChannelHeader, appSecretHeader, Authenticated, type Caller, PersonOnly } from "../../../schema/node/Security.js"
import { PersonOnlyRefused, Unauthenticated } from "../../../services/node/AccessErrors.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { NodeIdentity } from "../../../services/node/Identity.js"
import { toNodeError } from "./Errors.js"

const same = (given: string, expected: Redacted.Redacted<string>) => {
  const a = Buffer.from(given)
  const b = Buffer.from(Redacted.value(expected))
  return a.length === b.length && timingSafeEqual(a, b)
}

const unauthenticated = toNodeError(new Unauthenticated())

const callerOf = Effect.gen(function*() {
  const identity = yield* NodeIdentity
  const request = yield* HttpServerRequest.HttpServerRequest
  const secret = request.headers[appSecretHeader]
  const person = typeof secret === "string" && same(secret, identity.appSecret)
  const caller: Caller = {
    surface: person ? "person" : "cli-api",
    channel: person && request.headers[appChannelHeader] === "voice" ? "voice" : "text"
  }
  return caller
})

export const AuthenticationLive = Layer.effect(
  Authenticated,
  Effect.gen(function*() {
    const identity = yield* NodeIdentity
    return Authenticated.of({
      bearer: (token) =>
        same(Redacted.value(token), identity.localToken)
          ? Effect.provideService(callerOf, NodeIdentity, identity)
          : Effect.fail(unauthenticated)
    })
  })
)

export const PersonOnlyLive = Layer.effect(
  PersonOnly,
  Effect.gen(function*() {
    const identity = yield* NodeIdentity
    const audit = yield* AuditLog
    return PersonOnly.of({
      bearer: (token) =>
        Effect.gen(function*() {
          if (!same(Redacted.value(token), identity.localToken)) return yield* Effect.fail(unauthenticated)
          const caller = yield* Effect.provideService(callerOf, NodeIdentity, identity)
          if (caller.surface === "person") return caller
          const request = yield* HttpServerRequest.HttpServerRequest
          yield* audit.append({
            kind: "person-only.refused",
            surface: caller.surface,
            channel: caller.channel,
            detail: { method: request.method, path: request.url.split("?")[0] }
          })
          return yield* Effect.fail(toNodeError(new PersonOnlyRefused({ surface: caller.surface })))
        })
    })
  })
)
