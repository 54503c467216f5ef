/**
 * Every failure leaves the node as `{code, message, ...members}`: decoding
 * failures as 400 INVALID_INPUT naming the field, unknown routes as 404
 * RESOURCE_NOT_FOUND, defects as 500 INTERNAL without internals.
 */
import { HttpApiBuilder, HttpApiError, type HttpApp, HttpIncomingMessage } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { NodeError, nodeError } from "../../../schema/node/Errors.js"

/** Request bodies above this are refused (artifact chunks of 256 KiB travel as base64 inside JSON). */
export const maxBodyBytes = 1024 * 1024

const isTagged = <Tag extends string>(tag: Tag) => (u: unknown): u is { readonly _tag: Tag } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === tag

const fromDecodeError = (error: HttpApiError.HttpApiDecodeError) => {
  const issues = error.issues
    .map((issue) => ({ field: issue.path.map(String).join("."), message: issue.message }))
    .filter((issue, _, all) =>
      !(issue.message.startsWith("Expected undefined") && all.some((o) => o !== issue && o.field === issue.field))
    )
  const fields = [...new Set(issues.map((issue) => issue.field).filter((f) => f.length > 0))]
  return nodeError("INVALID_INPUT", fields.length > 0 ? `Invalid input: ${fields.join(", ")}` : "Invalid input", {
    field: fields[0] ?? null,
    issues
  })
}

const classify = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    if (Cause.isInterruptedOnly(cause)) return undefined
    const failure = Cause.failureOption(cause)
    const reason = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    if (reason instanceof NodeError) return reason
    if (reason instanceof HttpApiError.HttpApiDecodeError) return fromDecodeError(reason)
    if (isTagged("RouteNotFound")(reason)) return nodeError("RESOURCE_NOT_FOUND", "No such route")
    if (isTagged("RequestError")(reason)) {
      return nodeError("INVALID_INPUT", "The request body could not be read as JSON within the size limit")
    }
    yield* Effect.logError("Unexpected failure", cause)
    return nodeError("INTERNAL", "Internal error")
  })

/** The typed overload admits API-level errors only; every NodeError is declared somewhere, so the cast is sound. */
export const ErrorMappingLive = HttpApiBuilder.middleware((app) =>
  Effect.suspend(() => app).pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)),
    Effect.catchAllCause((cause) =>
      Effect.flatMap(classify(cause), (error) => (error === undefined ? Effect.failCause(cause) : Effect.fail(error)))
    )
  ) as unknown as HttpApp.Default
)
