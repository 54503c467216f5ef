/**
 * Every response gets a request id; every failure, whatever its source
 * (decoding, routing, a handler, a defect), leaves as a declared error in the
 * envelope `{error: {code, message, requestId, details?}}`.
 */
import {
  HttpApiBuilder,
  HttpApiSchema,
  type HttpApp,
  HttpIncomingMessage,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Effect, Option, Schema } from "effect"
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
import { type Classification, classify, namedPaths } from "../../http/Failures.js"

/** Methods whose body no route reads: the size limit is not set up for them. */
const bodiless = new Set(["GET", "HEAD", "OPTIONS"])

/** Request bodies above this are refused before they are read whole. */
export const maxBodyBytes = 1024 * 1024

const withRequestId = (error: MarketplaceError, requestId: string): MarketplaceError => {
  const Class = errorClasses[error._tag] as new(fields: object) => MarketplaceError
  return new Class({
    message: error.message,
    requestId,
    ...(error.details === undefined ? {} : { details: error.details })
  })
}

const classification: Classification<MarketplaceError | Unhealthy> = {
  declared: (reason) => (isMarketplaceError(reason) || reason instanceof Unhealthy ? reason : undefined),
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
 */
export const ErrorEnvelopeLive = HttpApiBuilder.middleware((app) =>
  // A plain flatMap, not Effect.gen: this runs on every request, and a generator costs several
  // times what one flatMap does.
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const requestId = randomUUID()
    // A declared oversized body is refused before reading; the size limit below catches the undeclared
    // (chunked) ones, by cutting the connection.
    const declared = Number(request.headers["content-length"] ?? 0)
    const guarded: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown> = declared > maxBodyBytes
      ? Effect.fail(new BadRequest({ message: `The request body is larger than ${maxBodyBytes} bytes` }))
      : bodiless.has(request.method)
      ? app
      : app.pipe(HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)))
    return guarded.pipe(
      Effect.map((response) => HttpServerResponse.setHeader(response, "x-request-id", requestId)),
      Effect.catchAllCause((cause) =>
        Effect.flatMap(
          classify(cause, classification).pipe(Effect.annotateLogs("requestId", requestId)),
          (error) => error === undefined ? Effect.failCause(cause) : Effect.succeed(render(error, requestId))
        )
      )
    )
  }) as unknown as HttpApp.Default)
