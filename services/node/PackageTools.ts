/**
 * The tools of installed service packages, as turns use them (docs/decisions.md, "Package tools in turns"):
 * offered to the model beside the node's own tools under names the model accepts, each call checked against
 * the manifest's input schema, the execution policy and the effect ledger before it reaches the package's
 * MCP service. A call never fails the turn: every refusal or failure is an outcome the model reads.
 */
import { Context, type Effect, type Option } from "effect"
import type { Decision } from "../../schema/node/Work.js"
import type { RiskClass, Tool } from "../../schema/node/Manifest.js"
import type { Channel, Surface } from "../../schema/node/Security.js"
import type { AuditEntry } from "./AuditLog.js"
import type { ToolSpec } from "./ModelProvider.js"
import type { TaskApproval } from "./TaskApprovals.js"
import type { ApprovalAlreadyDecided, ApprovalExpired, ApprovalForged, ApprovalNotFound } from "./PackageErrors.js"

/** What ask-again of an expired task approval did, or why it could not. */
export type AskAgainOutcome =
  | { readonly _tag: "AskedAgain"; readonly approval: TaskApproval }
  /** Not an expired approval, or asked again already (by an identical press, say). */
  | { readonly _tag: "NotExpired" }
  | { readonly _tag: "AlreadyAskedAgain" }
  /** The package is gone, or installed with other bytes: a grant would approve an operation that cannot run. */
  | { readonly _tag: "PackageGone" }

/** The turn a call belongs to. */
export interface CallContext {
  readonly taskId: string
  readonly conversationId: string
  readonly origin: Surface
  readonly channel: Channel
  /**
   * The caller writes the call's audit row itself, in the unit of work that records the call's outcome (a widget
   * press's closing transaction): the row comes back as `CallOutcome.audit` instead of costing a commit of its own.
   */
  readonly auditByCaller?: boolean | undefined
}

export interface OfferedTool extends ToolSpec {
  readonly packageId: string
  readonly tool: string
  readonly risk: RiskClass
}

/** What the timeline's tool block and the `tool-end` event add for a package tool. */
export interface CallDetails {
  readonly packageId: string
  readonly risk: RiskClass
  readonly summary: string
  readonly outcome?: "unknown-effect" | "approval-required" | "denied" | "not-sent" | undefined
  readonly code?: string | undefined
  readonly effectId?: string | undefined
  readonly approvalId?: string | undefined
}

export interface CallOutcome {
  readonly status: "done" | "failed"
  /** What the model reads. */
  readonly output: unknown
  /** The turn ends after this call: the task waits for the person (an approval, an unknown effect). */
  readonly endsTurn?: boolean | undefined
  readonly details: CallDetails
  /** The call's audit row, left to the caller (`CallContext.auditByCaller`); otherwise already appended. */
  readonly audit?: AuditEntry | undefined
}

export class PackageTools extends Context.Tag("clark/node/PackageTools")<PackageTools, {
  /** The tools of every installed service package (read from the manifests: offering starts no process). */
  readonly offered: Effect.Effect<ReadonlyArray<OfferedTool>>
  /** The offered tool of this model-facing name, if any. */
  readonly lookup: (name: string) => Effect.Effect<Option.Option<OfferedTool>>
  readonly call: (context: CallContext, name: string, input: unknown) => Effect.Effect<CallOutcome>
  /**
   * Decides a waiting task approval (person only, checked by the route): the digest must be the card's.
   * Answers the approval as it is after the decision.
   */
  readonly decide: (
    taskId: string,
    approvalId: string,
    decision: Decision,
    digest: string
  ) => Effect.Effect<
    TaskApproval,
    ApprovalNotFound | ApprovalForged | ApprovalAlreadyDecided | ApprovalExpired
  >
  /** Records the run a grant started. */
  readonly continued: (approvalId: string, taskId: string) => Effect.Effect<void>
  /**
   * Ask-again of an expired task approval (the inbox's notice action): the same operation asked anew, with a
   * new approval id and a new lifetime. Once per expired approval.
   */
  readonly askAgain: (approvalId: string) => Effect.Effect<AskAgainOutcome>
  /** Stops every package service that ran (emergency stop); answers how many were running. */
  readonly stopAll: Effect.Effect<number>
}>() {}

/** Model tool names: letters, digits, `_` and `-`, at most 64 (what the providers accept). */
const unsafe = /[^A-Za-z0-9_-]/g

/**
 * The model-facing name of each package tool: `<package>__<tool>`, the package's name without its scope; the
 * scope joins in when two packages share a name, and a long or still clashing name ends in a short digest of
 * the whole. `hash` is a stable short digest of its input.
 */
export const toolNames = (
  tools: ReadonlyArray<{ readonly packageId: string; readonly tool: string }>,
  hash: (text: string) => string
): ReadonlyArray<string> => {
  const bare = (packageId: string) => packageId.replace(/^@[^/]+\//, "")
  const clash = new Map<string, Set<string>>()
  for (const { packageId } of tools) {
    const set = clash.get(bare(packageId)) ?? new Set<string>()
    set.add(packageId)
    clash.set(bare(packageId), set)
  }
  const seen = new Set<string>()
  return tools.map(({ packageId, tool }) => {
    const prefix = (clash.get(bare(packageId))!.size > 1 ? packageId.replace(/^@/, "") : bare(packageId))
    let name = `${prefix}__${tool}`.replace(unsafe, "_")
    if (name.length > 64 || seen.has(name)) {
      const tail = `_${hash(`${packageId}\u0000${tool}`).slice(0, 8)}`
      name = `${name.slice(0, 64 - tail.length)}${tail}`
    }
    seen.add(name)
    return name
  })
}

/** The model's view of a manifest tool: its description says what it may change. */
export const describe = (tool: Tool) =>
  tool.risk === "read" ? tool.description : `${tool.description} (risk: ${tool.risk})`
