/**
 * The sentences of the widget press and widget file refusals, by reason: kept apart from the mapping in
 * Errors.ts so it stays one table of domain error → wire code.
 */
import type { NodeErrorCode } from "../../../schema/node/Errors.js"
import type { WriteProblem } from "../../../services/node/ArtifactErrors.js"
import type { PressFailure } from "../../../services/node/WidgetErrors.js"

/** The code and sentence of each way a press's call did not simply run. */
export const pressFailures: Record<typeof PressFailure.Type, { readonly code: NodeErrorCode; readonly message: string }> = {
  "policy-refused": { code: "POLICY_REFUSED", message: "A deny rule of the person refuses this action; nothing was sent" },
  "ledger-unavailable": { code: "LEDGER_UNAVAILABLE", message: "The effect ledger cannot be written; nothing was sent" },
  "service-timed-out": { code: "SERVICE_TIMED_OUT", message: "The tool did not answer in time; it may have run" },
  "service-cancelled": { code: "SERVICE_CANCELLED", message: "The call was cancelled before its answer; it may have run" },
  "service-unreachable": { code: "SERVICE_UNREACHABLE", message: "The package's service could not be reached" },
  "service-tool-failed": { code: "SERVICE_TOOL_FAILED", message: "The tool failed without an answer; it may have run" },
  "tool-not-offered": { code: "SERVICE_UNREACHABLE", message: "The package's service does not serve the bound tool; nothing was sent" },
  "input-refused": { code: "INVALID_INPUT", message: "The input does not fit the bound tool; nothing was sent" },
  "job-unavailable": { code: "JOB_UNAVAILABLE", message: "This node cannot run the bound job now; nothing was started" }
}

export const pressSchemaMessages = {
  "reserved-invocation-id": "Invocation ids starting with view-state: are reserved",
  "sequence-without-variant": "A sequence is only taken with variant view-state",
  "variant-without-sequence": "The view-state variant needs a sequence",
  "unknown-variant": "The only press variant is view-state"
} as const

export const pressUnsupportedMessages = {
  "unknown-binding": "This widget has no such action binding",
  "variant-on-other-binding": "The view-state variant is only for a host-held player's binding",
  "player-needs-variant": "A host-held player's binding takes only view-state writes"
} as const

export const pressInputMessages = {
  "stale-revision": "The widget has moved on since this press was drawn (expectedRevision is not its revision)",
  "binding-digest-mismatch": "The binding is not the one this press was drawn for (expectedBindingDigest)",
  input: "The input does not fit the action",
  "clock-bound": "The state is more than one day past the node's clock",
  "semantic-not-held": "The node does not hold the widget description this press reads"
} as const

export const writeProblemMessages: Record<WriteProblem, (e: { sizeBytes?: number | undefined; limitBytes?: number | undefined; found?: string | undefined }) => string> = {
  "offset-mismatch": (e) => `The file ends at byte ${e.sizeBytes ?? 0}: a chunk must start there`,
  finalized: () => "The file is finalized: its bytes can no longer change",
  "too-large": (e) => `A file may hold at most ${e.limitBytes ?? 0} bytes`,
  "type-mismatch": (e) => `The bytes are not the declared type (they look like ${e.found ?? "something else"})`,
  "not-accepted": () => "The file is not one of the types the widget accepts",
  "not-writable": () => "This widget may read the file but not write it"
}

export const writeProblemFields: Record<WriteProblem, string | null> = {
  "offset-mismatch": "offset",
  finalized: null,
  "too-large": "contentBase64",
  "type-mismatch": "mimeType",
  "not-accepted": "mimeType",
  "not-writable": null
}
