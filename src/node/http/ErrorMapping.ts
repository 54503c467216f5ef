/**
 * Every failure leaves the node as `{code, message, ...members}`: decoding
 * failures as 400 INVALID_INPUT naming the field, unknown routes as 404
 * RESOURCE_NOT_FOUND, defects as 500 INTERNAL without internals.
 */
import { HttpApiBuilder, type HttpApp, HttpIncomingMessage } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeError, nodeError } from "../../../schema/node/Errors.js"
import { type Classification, classify, namedPaths } from "../../http/Failures.js"

/** Request bodies above this are refused (artifact chunks of 256 KiB travel as base64 inside JSON). */
export const maxBodyBytes = 1024 * 1024

const classification: Classification<NodeError> = {
  declared: (reason) => (reason instanceof NodeError ? reason : undefined),
  invalid: (issues) => {
    const fields = namedPaths(issues)
    return nodeError("INVALID_INPUT", fields.length > 0 ? `Invalid input: ${fields.join(", ")}` : "Invalid input", {
      field: fields[0] ?? null,
      issues: issues.map(({ message, path }) => ({ field: path, message }))
    })
  },
  noRoute: () => nodeError("RESOURCE_NOT_FOUND", "No such route"),
  unreadableBody: () => nodeError("INVALID_INPUT", "The request body could not be read as JSON within the size limit"),
  internal: () => nodeError("INTERNAL", "Internal error")
}

/** The typed overload admits API-level errors only; every NodeError is declared somewhere, so the cast is sound. */
export const ErrorMappingLive = HttpApiBuilder.middleware((app) =>
  Effect.suspend(() => app).pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)),
    Effect.catchAllCause((cause) =>
      Effect.flatMap(classify(cause, classification), (error) => (error === undefined ? Effect.failCause(cause) : Effect.fail(error)))
    )
  ) as unknown as HttpApp.Default
)
