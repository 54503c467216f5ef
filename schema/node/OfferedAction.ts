/**
 * Offered actions (spec, "Actions the assistant asks a widget to perform"; docs/decisions.md, "Offered actions
 * and job approvals"): the requests the node handed to a widget, which the app reads (or receives as the turn's
 * `widget-action-requested` event), and the app's report of what the widget's handler did.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { refusals } from "./Errors.js"
import { LookupId, widgetPrefix, WidgetPath } from "./Instance.js"
import { Authenticated } from "./Security.js"

export const OfferedRequestPath = Schema.Struct({ ...WidgetPath.fields, requestId: LookupId })

/** A request waiting for the widget: the app runs `api.actions.offer(action, handler)` with `input`. */
export const OfferedRequestView = Schema.Struct({
  requestId: Schema.String,
  instanceId: Schema.String,
  action: Schema.String,
  input: Schema.Unknown,
  status: Schema.String,
  requestedAt: Schema.String
}).annotations({ identifier: "OfferedActionRequest" })

export const OfferedRequestList = Schema.Struct({ requests: Schema.Array(OfferedRequestView) })
  .annotations({ identifier: "OfferedActionRequests" })

/**
 * What the widget did: `done` with its `result`, `refused` by `api.actions.refuse(code, why)` before changing
 * anything, or `error` (anything else: the effect is unknown and never retried).
 */
export const OfferedReport = Schema.Struct({
  outcome: Schema.Literal("done", "refused", "error"),
  code: Schema.optional(Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.-]{1,64}$/))),
  why: Schema.optional(Schema.String.pipe(Schema.maxLength(400))),
  result: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "OfferedActionReport" })

export const OfferedSettled = Schema.Struct({
  requestId: Schema.String,
  status: Schema.Literal("done", "refused", "unknown"),
  effectId: Schema.NullOr(Schema.String)
}).annotations({ identifier: "OfferedActionSettled" })

export class OfferedActionsGroup extends HttpApiGroup.make("offeredActions")
  .add(
    HttpApiEndpoint.get("waiting", `${widgetPrefix}/offered`)
      .setPath(WidgetPath)
      .addSuccess(OfferedRequestList)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("report", `${widgetPrefix}/offered/:requestId`)
      .setPath(OfferedRequestPath)
      .setPayload(OfferedReport)
      .addSuccess(OfferedSettled)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "RESOURCE_NOT_FOUND", "OFFERED_ACTION_ANSWERED"))
      .middleware(Authenticated)
  )
{}
