/**
 * Every failure leaves the node as `{code, message, ...members}`: decoding
 * failures and refused bodies as 400 INVALID_INPUT naming the field or the limit,
 * unknown routes as 404 RESOURCE_NOT_FOUND, defects as 500 INTERNAL without
 * internals.
 */
import { HttpApiBuilder, type HttpApp, HttpMethod, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { NodeError, nodeError } from "../../../schema/node/Errors.js"
import { BodyRefused, guarded } from "../../http/Bodies.js"
import { type Classification, classify, namedPaths } from "../../http/Failures.js"
import { rulesFor } from "./Bodies.js"

const classification: Classification<NodeError> = {
  declared: (reason) =>
    reason instanceof NodeError
      ? reason
      : reason instanceof BodyRefused
      ? nodeError("INVALID_INPUT", reason.message, {
        field: null,
        ...(reason.limitBytes === undefined ? {} : { limitBytes: reason.limitBytes })
      })
      : undefined,
  invalid: (issues) => {
    const fields = namedPaths(issues)
    return nodeError("INVALID_INPUT", fields.length > 0 ? `Invalid input: ${fields.join(", ")}` : "Invalid input", {
      field: fields[0] ?? null,
      issues: issues.map(({ message, path }) => ({ field: path, message }))
    })
  },
  noRoute: () => nodeError("RESOURCE_NOT_FOUND", "No such route"),
  unreadableBody: () => nodeError("INVALID_INPUT", "The request body could not be read"),
  internal: () => nodeError("INTERNAL", "Internal error")
}

/**
 * Requests that may carry a body get it read by the node's own rules
 * (src/http/Bodies.ts), lazily: only a route that takes a payload reads it, after
 * authentication, as HttpApi would. GET routes run untouched.
 *
 * The typed overload admits API-level errors only; every NodeError is declared somewhere, so the cast is sound.
 */
export const ErrorMappingLive = HttpApiBuilder.middleware((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    // `guarded` sets the readers on this request object itself, so the request in context is already the guarded
    // one: providing it again would only change the fiber's context for nothing (a dozen steps per request).
    if (HttpMethod.hasBody(request.method)) guarded(request, rulesFor(request.url))
    return app.pipe(
        Effect.catchAllCause((cause) =>
          Effect.flatMap(
            classify(cause, classification),
            (error) => (error === undefined ? Effect.failCause(cause) : Effect.fail(error))
          )
        )
      )
  }) as unknown as HttpApp.Default
)
