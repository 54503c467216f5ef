/**
 * Every response gets a request id; every failure, whatever its source
 * (decoding, routing, a handler, a defect), leaves as a declared error in the
 * envelope `{error: {code, message, requestId, details?}}`.
 */
import { HttpApiBuilder, HttpApiSchema, type HttpApp, HttpMethod, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import {
  BadRequest,
  errorClasses,
  InternalError,
  isMarketplaceError,
  type MarketplaceError,
  NotFound,
  ValidationFailed,
  wireByTag
} from "../../../schema/marketplace/Errors.js"
import { Unhealthy, UnhealthyWire } from "../../../schema/marketplace/System.js"
import { BodyRefused, type BodyRules, guarded } from "../../http/Bodies.js"
import { type Classification, classify, namedPaths } from "../../http/Failures.js"
import { targetProblem } from "../../http/Targets.js"

/** Request bodies above this are refused, declared or counted as they arrive. */
export const maxBodyBytes = 1024 * 1024

/**
 * The deepest curation command nests three levels; every decoder after the
 * check recurses, and 3,000 levels overflowed the stack of one of them (a 500).
 */
export const maxBodyDepth = 32

const bodyRules: BodyRules = { limitBytes: maxBodyBytes, maxDepth: maxBodyDepth }

const withRequestId = (error: MarketplaceError, requestId: string): MarketplaceError => {
  const Class = errorClasses[error._tag] as new(fields: object) => MarketplaceError
  return new Class({
    message: error.message,
    requestId,
    ...(error.details === undefined ? {} : { details: error.details })
  })
}

const invalidInput = (path: string, message: string) =>
  new ValidationFailed({ message, details: { issues: [{ path, message }] } })

/**
 * A refused character is invalid input like any other value out of bounds (400
 * validation_failed, naming where); a body that cannot be read as JSON within the
 * rules is 400 bad_request. The spec's error table has no 413 or 415.
 */
const bodyRefusal = (refusal: BodyRefused): MarketplaceError =>
  refusal.reason === "character"
    ? invalidInput(refusal.path ?? "", refusal.message)
    : new BadRequest({
      message: refusal.message,
      ...(refusal.limitBytes === undefined ? {} : { details: { limitBytes: refusal.limitBytes } })
    })

const classification: Classification<MarketplaceError | Unhealthy> = {
  declared: (reason) =>
    isMarketplaceError(reason) || reason instanceof Unhealthy
      ? reason
      : reason instanceof BodyRefused
      ? bodyRefusal(reason)
      : undefined,
  invalid: (issues) => {
    const named = namedPaths(issues)
    return new ValidationFailed({
      message: named.length > 0 ? `Invalid request: ${named.join(", ")}` : "Invalid request",
      details: { issues }
    })
  },
  noRoute: () => new NotFound({ message: "No such route" }),
  unreadableBody: () => new BadRequest({ message: "The request body could not be read as JSON within the size limit" }),
  internal: () => new InternalError({ message: "Internal error" })
}

/** A declared failure as its response: the wire schema's body and status, with the request id. */
const render = (error: MarketplaceError | Unhealthy, requestId: string) => {
  const [wire, value] = error instanceof Unhealthy
    ? [UnhealthyWire as Schema.Schema<unknown, unknown>, error]
    : [wireByTag[error._tag] as Schema.Schema<unknown, unknown>, withRequestId(error, requestId)]
  return HttpServerResponse.unsafeJson(Schema.encodeSync(wire)(value), {
    status: HttpApiSchema.getStatus(wire.ast, 500),
    headers: { "x-request-id": requestId }
  })
}

/**
 * Answers every declared failure itself, in the envelope, so that the request
 * id header is set on the response directly: a pre-response handler and a log
 * annotation per request cost about a sixth of the throughput of a light
 * route. The request id is attached to the logs of failures only.
 *
 * A target whose percent-encoding is malformed is refused before routing. Bodies
 * are read by the shared rules (src/http/Bodies.ts), lazily, when a route decodes
 * its payload: JSON only, at most `maxBodyBytes` whether declared or counted (the
 * rest is drained, so the client reads the answer instead of a reset),
 * `maxBodyDepth` levels, no NUL or lone surrogate.
 */
export const ErrorEnvelopeLive = HttpApiBuilder.middleware((app) =>
  // A plain flatMap, not Effect.gen: this runs on every request, and a generator costs several
  // times what one flatMap does.
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const requestId = randomUUID()
    const target = targetProblem(request.url)
    if (target !== undefined) return Effect.succeed(render(invalidInput(target.path, target.message), requestId))
    const handled: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown> = HttpMethod.hasBody(request.method)
      ? Effect.provideService(app, HttpServerRequest.HttpServerRequest, guarded(request, bodyRules))
      : app
    return handled.pipe(
      Effect.map((response) => HttpServerResponse.setHeader(response, "x-request-id", requestId)),
      Effect.catchAllCause((cause) =>
        Effect.flatMap(
          classify(cause, classification).pipe(Effect.annotateLogs("requestId", requestId)),
          (error) => error === undefined ? Effect.failCause(cause) : Effect.succeed(render(error, requestId))
        )
      )
    )
  }) as unknown as HttpApp.Default)
