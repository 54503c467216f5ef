/**
 * Actions the assistant asks a placed widget to perform (spec, "Actions the assistant asks a widget to perform";
 * docs/decisions.md, "Offered actions and job approvals"). The turn's node tool `perform_widget_action` checks the
 * request (offered, at most 1,200 characters, the execution policy of a local write), records it in the effect
 * ledger and hands it to the app, which runs the widget's handler and reports what it did; or, when policy asks,
 * leaves an approval card (a task approval) that the decide route settles through `decided`.
 */
import { Context, type Effect, type Option } from "effect"
import type { Channel, Surface } from "../../schema/node/Security.js"
import type { OfferedActionError } from "./OfferedActionErrors.js"
import type { CallDetails } from "./PackageTools.js"
import type { TaskApproval } from "./TaskApprovals.js"
import type { InstanceUnknown } from "./WidgetErrors.js"
import type { ToolSpec } from "./ModelProvider.js"
import { performToolName, type WidgetOutcome } from "./OfferedActionRules.js"

export type OfferedStatus = "asked" | "requested" | "done" | "refused" | "unknown" | "approved-not-performed" | "denied"

export interface OfferedRequest {
  readonly requestId: string
  readonly conversationId: string
  readonly instanceId: string
  readonly taskId: string
  readonly origin: Surface
  readonly action: string
  readonly input: unknown
  readonly operationDigest: string
  readonly approvalId: string | null
  readonly effectId: string | null
  readonly status: OfferedStatus
  readonly code: string | null
  readonly why: string | null
  readonly result: unknown
  readonly requestedAt: string
  readonly answeredAt: string | null
}

/** The turn asking, and how it tells a streaming app about a request handed over (`widget-action-requested`). */
export interface PerformContext {
  readonly taskId: string
  readonly conversationId: string
  readonly origin: Surface
  readonly channel: Channel
  readonly emit: (data: unknown) => void
}

/** What the tool answers the model (and the tool block keeps). */
export interface PerformOutcome {
  readonly status: "done" | "failed"
  readonly output: unknown
  readonly endsTurn?: boolean | undefined
  readonly details?: CallDetails | undefined
}

/** What the widget did, as the app reports it. */
export interface WidgetReport {
  readonly outcome: WidgetOutcome
  readonly code?: string | undefined
  readonly why?: string | undefined
  readonly result?: unknown
}

/** How a decided card of an offered action ended: performed (handed to the app) or not. */
export interface OfferedDecision {
  readonly performed: boolean
  readonly requestId: string
}

export class OfferedActions extends Context.Tag("clark/node/OfferedActions")<OfferedActions, {
  readonly perform: (context: PerformContext, input: unknown) => Effect.Effect<PerformOutcome>
  /** Whether a request of the conversation is handed to the app and not answered (deletion waits for it). */
  readonly settling: (conversationId: string) => Effect.Effect<boolean>
  /** The requests handed to the app that the widget has not answered yet, oldest first. */
  readonly waiting: (conversationId: string, instanceId: string) => Effect.Effect<ReadonlyArray<OfferedRequest>, InstanceUnknown>
  readonly report: (
    conversationId: string,
    instanceId: string,
    requestId: string,
    report: WidgetReport
  ) => Effect.Effect<OfferedRequest, InstanceUnknown | OfferedActionError>
  /**
   * A task approval the person just decided: `none` when it is not an offered action's card. Granted from a page
   * that shows the widget (`shownInstanceIds` names it), the action is handed to the app; granted anywhere else
   * (the inbox, another page) it is recorded as approved, not performed, and nothing is sent.
   */
  readonly decided: (
    approval: TaskApproval,
    shownInstanceIds: ReadonlyArray<string> | undefined
  ) => Effect.Effect<Option.Option<OfferedDecision>>
}>() {}

/** The turn's node tool (offered beside `place_widget`). */
export const performTool: ToolSpec = {
  name: performToolName,
  description:
    "Ask a placed widget to perform one of its offered actions (`offeredActions` in place_widget's answer) with an input of at most 1,200 characters as JSON. The answer says whether the widget did it, refused it, or whether it is unknown.",
  inputSchema: {
    type: "object",
    properties: {
      instanceId: { type: "string" },
      action: { type: "string" },
      input: {}
    },
    required: ["instanceId", "action"]
  }
}
