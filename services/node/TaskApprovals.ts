/**
 * Task approvals (spec, "Task approval"): a risky step of a turn from another program, held until the person
 * decides. The card shows the origin, the tool, the whole input and the `operationDigest` over tool, input and
 * package digest; a grant covers exactly that operation, once. Each transition is one conditional write, so of
 * simultaneous deciders exactly one moves it.
 */
import { Context, type Effect, type Option } from "effect"
import type { RiskClass } from "../../schema/node/Manifest.js"
import type { Surface } from "../../schema/node/Security.js"

export type TaskApprovalStatus = "asked" | "granted" | "used" | "denied" | "expired"

export interface TaskApproval {
  readonly approvalId: string
  readonly taskId: string
  readonly conversationId: string
  readonly origin: Surface
  readonly packageId: string
  readonly packageDigest: string
  readonly tool: string
  readonly risk: RiskClass
  readonly input: unknown
  readonly operationDigest: string
  readonly status: TaskApprovalStatus
  readonly requestedAt: string
  readonly expiresAt: string
  readonly decidedAt: string | null
  /** The task of the run the grant started, when the node accepted it. */
  readonly continuedAs: string | null
}

export class TaskApprovals extends Context.Tag("clark/node/TaskApprovals")<TaskApprovals, {
  readonly insert: (approval: TaskApproval) => Effect.Effect<void>
  /**
   * The approval asked again in place of an expired one: marks the expired one's notice as asked again and
   * inserts `approval`, in one transaction; false (nothing written) when it was asked again already.
   */
  readonly askAgain: (expiredId: string, approval: TaskApproval) => Effect.Effect<boolean>
  readonly get: (approvalId: string) => Effect.Effect<Option.Option<TaskApproval>>
  readonly waiting: Effect.Effect<ReadonlyArray<TaskApproval>>
  /** A granted, unused approval of this conversation for exactly this operation. */
  readonly grantedFor: (conversationId: string, operationDigest: string) => Effect.Effect<Option.Option<TaskApproval>>
  /**
   * Moves the approval from one of `from` to `to`; false when it was in none of them. Into `expired`, it writes
   * the notice that says so (kind `task-approval-expired`) in the same transaction.
   */
  readonly transition: (
    approvalId: string,
    from: ReadonlyArray<TaskApprovalStatus>,
    to: TaskApprovalStatus,
    at: string
  ) => Effect.Effect<boolean>
  readonly continued: (approvalId: string, taskId: string) => Effect.Effect<void>
  readonly list: (limit: number) => Effect.Effect<ReadonlyArray<TaskApproval>>
}>() {}
