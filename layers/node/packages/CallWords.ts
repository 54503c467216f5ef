/**
 * The words of a package tool call that are not its logic: the digest a person approves, the short package name in
 * summaries, the wire code and unknown-effect reason of each way a sent call fails, and the model's message for each
 * refusal (PackageTools.ts).
 */
import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import type { UnknownReason } from "../../../services/node/Ledger.js"
import type { ServiceCallError } from "../../../services/node/ServiceRuntime.js"

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** What the person is asked to approve, as one digest: the tool of the package, the whole input, the package bytes. */
export const operationDigest = (packageId: string, tool: string, input: unknown, packageDigest: string) =>
  `sha256:${sha256(canonicalize(["tool-call", `${packageId}/${tool}`, input ?? null, packageDigest]) ?? "")}`

export const bare = (packageId: string) => packageId.replace(/^@[^/]+\//, "")

/** The wire code of each way a sent call can fail, and the reason its effect is unknown. */
export const failures: Record<ServiceCallError["_tag"], { readonly code: string; readonly reason: UnknownReason }> = {
  ServiceTimedOut: { code: "SERVICE_TIMED_OUT", reason: "timed-out" },
  ServiceCancelled: { code: "SERVICE_CANCELLED", reason: "cancelled" },
  ServiceUnreachable: { code: "SERVICE_UNREACHABLE", reason: "unreachable" },
  ServiceToolFailed: { code: "SERVICE_TOOL_FAILED", reason: "tool-failed" },
  ServiceToolNotOffered: { code: "RESOURCE_NOT_FOUND", reason: "tool-failed" }
}

export const messages: Record<string, string> = {
  INVALID_INPUT: "The input does not fit the tool's schema; nothing was sent.",
  POLICY_REFUSED: "A deny rule of the person refuses this step; it was not run.",
  APPROVAL_REQUIRED: "The person must approve this step first; the task waits for their decision. Do not retry it.",
  LEDGER_UNAVAILABLE: "The effect ledger cannot be written, so the step was not sent.",
  SERVICE_UNREACHABLE: "The package's service could not be reached.",
  SERVICE_TIMED_OUT: "The tool did not answer in time.",
  SERVICE_CANCELLED: "The call was cancelled.",
  SERVICE_TOOL_FAILED: "The tool failed.",
  RESOURCE_NOT_FOUND: "The package's service does not offer this tool."
}
