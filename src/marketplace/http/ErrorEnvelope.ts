/**
 * Every response gets a request id; every failure, whatever its source
 * (decoding, routing, a handler, a defect), leaves as a declared error in the
 * envelope `{error: {code, message, requestId, details?}}`.
 */
import {
  HttpApiBuilder,
  HttpApp,
  HttpIncomingMessage,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import {
  BadRequest,
  errorClasses,
  InternalError,
  isMarketplaceError,
  type MarketplaceError,
  NotFound,
  ValidationFailed
} from "../../../schema/marketplace/Errors.js"
import { Unhealthy } from "../../../schema/marketplace/System.js"
import { type Classification, classify, namedPaths } from "../../http/Failures.js"

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

const classification: Classification<MarketplaceError> = {
  declared: (reason) => (isMarketplaceError(reason) ? reason : undefined),
  // The health route answers its own 503 body.
  passThrough: (reason) => reason instanceof Unhealthy,
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

/**
 * The typed overload only admits API-level errors, but this middleware fails
 * with any declared error of any endpoint; HttpApiBuilder encodes them all
 * with the union of every declared error schema, so the cast is sound.
 */
export const ErrorEnvelopeLive = HttpApiBuilder.middleware((app) =>
  Effect.gen(function*() {
    const requestId = randomUUID()
    yield* HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    // A declared oversized body is refused before reading; the size limit below catches the undeclared
    // (chunked) ones, by cutting the connection.
    const request = yield* HttpServerRequest.HttpServerRequest
    const declared = Number(request.headers["content-length"] ?? 0)
    const guarded = declared > maxBodyBytes
      ? Effect.fail(new BadRequest({ message: `The request body is larger than ${maxBodyBytes} bytes` }))
      : app
    return yield* guarded.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)),
      Effect.catchAllCause((cause) =>
        Effect.flatMap(classify(cause, classification), (error) =>
          error === undefined ? Effect.failCause(cause) : Effect.fail(withRequestId(error, requestId)))
      ),
      Effect.annotateLogs("requestId", requestId)
    )
  }) as unknown as HttpApp.Default)
