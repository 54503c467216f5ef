/**
 * A job press asked about by the execution policy (spec, "Long-running package jobs": "When the execution mode
 * asks, an approval card comes first and the job starts after approval"). The card is a task approval; the job it
 * would start is kept beside it and started by the decide route on a grant.
 */
import { Context, type Effect, type Option } from "effect"
import type { RiskClass } from "../../schema/node/Manifest.js"
import type { JobStart } from "./Jobs.js"
import type { TaskApproval } from "./TaskApprovals.js"

export type JobGate =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Deny"; readonly rule: number }
  | { readonly _tag: "Asked"; readonly approvalId: string }

export class JobApprovals extends Context.Tag("clark/node/JobApprovals")<JobApprovals, {
  /** The policy of the job's tool for this press: run now, refused, or a card (the same card while one waits). */
  readonly gate: (
    start: JobStart,
    about: { readonly taskId: string; readonly risk: RiskClass; readonly packageDigest: string }
  ) => Effect.Effect<JobGate>
  /** A decided task approval: `none` when it is not a job's card; on a grant the job starts (its id, or null). */
  readonly decided: (approval: TaskApproval) => Effect.Effect<Option.Option<{ readonly jobId: string | null }>>
}>() {}
