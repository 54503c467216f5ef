/**
 * What can keep a service package's tool call from a trustworthy answer, as the service runtime sees it.
 * None of these knows an HTTP status: the node's one mapping module (src/node/http/Errors.ts) turns each
 * into its wire code. No field ever holds a credential, an environment value or a path on this machine;
 * `detail` is the service's own words (truncated), which the model may see like any tool output.
 */
import { Schema } from "effect"

/**
 * The service could not be started or spoken to: no service facet, the entry would not run, the process
 * ended or stayed silent before the MCP handshake and tool listing were done.
 */
export class ServiceUnreachable extends Schema.TaggedError<ServiceUnreachable>()("ServiceUnreachable", {
  packageId: Schema.String,
  reason: Schema.Literal("no-service-facet", "start-failed", "exited", "handshake-timeout", "handshake-failed")
}) {}

/**
 * The call was sent and did not end in a tool result: the process died during it (`crashed`), the
 * service answered with a protocol error instead of a result (`error`), or its result was not a valid MCP
 * tool result (`invalid-answer`). A result with `isError: true` is not this: it is an answer.
 */
export class ServiceToolFailed extends Schema.TaggedError<ServiceToolFailed>()("ServiceToolFailed", {
  packageId: Schema.String,
  tool: Schema.String,
  reason: Schema.Literal("crashed", "error", "invalid-answer"),
  detail: Schema.optional(Schema.String)
}) {}

/** No answer within the call's timeout; the call was cancelled over MCP (and the process killed if wedged). */
export class ServiceTimedOut extends Schema.TaggedError<ServiceTimedOut>()("ServiceTimedOut", {
  packageId: Schema.String,
  tool: Schema.String,
  timeoutMillis: Schema.Number
}) {}

/**
 * The call was cancelled before its answer: by the caller's `cancel` signal, or because its service was
 * stopped (uninstall, emergency stop, shutdown). Whether the tool had already acted is unknown.
 */
export class ServiceCancelled extends Schema.TaggedError<ServiceCancelled>()("ServiceCancelled", {
  packageId: Schema.String,
  tool: Schema.String,
  by: Schema.Literal("caller", "stop")
}) {}

/**
 * The tool is not one this service offers: the manifest does not declare it, or the running service does
 * not serve it. Nothing was sent.
 */
export class ServiceToolNotOffered extends Schema.TaggedError<ServiceToolNotOffered>()("ServiceToolNotOffered", {
  packageId: Schema.String,
  tool: Schema.String
}) {}

/** What a tool call can fail with. Every one but `ServiceToolNotOffered` and `ServiceUnreachable` went out. */
export type ServiceCallError =
  | ServiceUnreachable
  | ServiceToolFailed
  | ServiceTimedOut
  | ServiceCancelled
  | ServiceToolNotOffered
