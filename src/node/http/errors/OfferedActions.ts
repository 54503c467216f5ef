/** Wire codes of the offered-action routes' refusals (spread into the node's one mapping in ../Errors.ts). */
import { NodeError } from "../../../../schema/node/Errors.js"
import type {
  OfferedReportInvalid,
  OfferedRequestAnswered,
  OfferedRequestNotFound
} from "../../../../services/node/OfferedActionErrors.js"

const reportMessages: Record<string, string> = {
  "refusal-needs-code": "A refusal names its code, as api.actions.refuse(code, why) gives it",
  "result-too-long": "The result is at most 20,000 characters as JSON"
}

export const offeredActionMapping = {
  OfferedRequestNotFound: (_e: OfferedRequestNotFound) =>
    new NodeError({ code: "RESOURCE_NOT_FOUND", message: "No such request for this widget" }),
  OfferedRequestAnswered: (e: OfferedRequestAnswered) =>
    new NodeError({
      code: "OFFERED_ACTION_ANSWERED",
      message: `The request was already settled (${e.status}); the first answer stands`,
      members: { requestId: e.requestId, status: e.status }
    }),
  OfferedReportInvalid: (e: OfferedReportInvalid) =>
    new NodeError({
      code: "INVALID_INPUT",
      message: reportMessages[e.reason] ?? "The report does not fit",
      members: { field: e.field, reason: e.reason }
    })
}
