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

/** A secret's bytes, made once per layer: a request then allocates only the bytes it sent. */
const bytesOf = (secret: Redacted.Redacted<string>) => Buffer.from(Redacted.value(secret))

const same = (given: string, expected: Buffer) => {
  const a = Buffer.from(given)
  return a.length === expected.length && timingSafeEqual(a, expected)
}

const unauthenticated = toNodeError(new Unauthenticated())

/**
 * The caller a request with the right token is, from its headers. A plain map over the request rather than a
 * generator that also asks for the identity: this runs on every authenticated request.
 */
const callerOf = (appSecret: Buffer) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request): Caller => {
    const secret = request.headers[appSecretHeader]
    const person = typeof secret === "string" && same(secret, appSecret)
    return {
      surface: person ? "person" : "cli-api",
      channel: person && request.headers[appChannelHeader] === "voice" ? "voice" : "text"
    }
  })

export const AuthenticationLive = Layer.effect(
  Authenticated,
  Effect.gen(function*() {
    const identity = yield* NodeIdentity
    const localToken = bytesOf(identity.localToken)
    const caller = callerOf(bytesOf(identity.appSecret))
    return Authenticated.of({
      bearer: (token) => same(Redacted.value(token), localToken) ? caller : Effect.fail(unauthenticated)
    })
  })
)

export const PersonOnlyLive = Layer.effect(
  PersonOnly,
  Effect.gen(function*() {
    const identity = yield* NodeIdentity
    const audit = yield* AuditLog
    const localToken = bytesOf(identity.localToken)
    const callerNow = callerOf(bytesOf(identity.appSecret))
    return PersonOnly.of({
      bearer: (token) => {
        if (!same(Redacted.value(token), localToken)) return Effect.fail(unauthenticated)
        // The person passes with one map; only a refusal, which is audited, takes the longer way.
        return Effect.flatMap(callerNow, (caller) =>
          caller.surface === "person" ? Effect.succeed(caller) : Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            yield* audit.append({
              kind: "person-only.refused",
              surface: caller.surface,
              channel: caller.channel,
              detail: { method: request.method, path: request.url.split("?")[0] }
            })
            return yield* Effect.fail(toNodeError(new PersonOnlyRefused({ surface: caller.surface })))
          }))
      }
    })
  })
)
