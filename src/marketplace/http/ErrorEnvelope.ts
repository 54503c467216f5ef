/**
 * Every response gets a request id; every failure, whatever its source
 * (decoding, routing, a handler, a defect), leaves as a declared error in the
 * envelope `{error: {code, message, requestId, details?}}`.
 */
import {
  HttpApiBuilder,
  HttpApiError,
  HttpApp,
  HttpIncomingMessage,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Cause, Effect, Option } from "effect"
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

const pathOf = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

const fromDecodeError = (error: HttpApiError.HttpApiDecodeError) => {
  // An optional field that fails also reports "Expected undefined" for its absent branch: noise to a client.
  const issues = error.issues
    .map((issue) => ({ path: pathOf(issue.path), message: issue.message }))
    .filter((issue, _, all) =>
      !(issue.message.startsWith("Expected undefined") && all.some((other) => other !== issue && other.path === issue.path))
    )
  const named = [...new Set(issues.map((issue) => issue.path).filter((path) => path.length > 0))]
  return new ValidationFailed({
    message: named.length > 0 ? `Invalid request: ${named.join(", ")}` : "Invalid request",
    details: { issues }
  })
}

const isTagged = <Tag extends string>(tag: Tag) => (u: unknown): u is { readonly _tag: Tag } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === tag

/** The declared error a cause becomes; `undefined` when it must pass through unchanged. */
const classify = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    if (Cause.isInterruptedOnly(cause)) return undefined
    const failure = Cause.failureOption(cause)
    const reason = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    if (isMarketplaceError(reason)) return reason
    if (reason instanceof Unhealthy) return undefined
    if (reason instanceof HttpApiError.HttpApiDecodeError) return fromDecodeError(reason)
    if (isTagged("RouteNotFound")(reason)) return new NotFound({ message: "No such route" })
    if (isTagged("RequestError")(reason)) {
      return new BadRequest({ message: "The request body could not be read as JSON within the size limit" })
    }
    yield* Effect.logError("Unexpected failure", cause)
    return new InternalError({ message: "Internal error" })
  })

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
        Effect.flatMap(classify(cause), (error) =>
          error === undefined ? Effect.failCause(cause) : Effect.fail(withRequestId(error, requestId)))
      ),
      Effect.annotateLogs("requestId", requestId)
    )
  }) as unknown as HttpApp.Default)
