/**
 * What waits for the person, as GET /inbox lists it: install approvals (only while the directory still publishes
 * that exact package, version and digest), task approvals and unknown effects.
 */
import { Clock, DateTime, type Duration, Effect, Option } from "effect"
import type { WaitingItem } from "../../../schema/node/Inbox.js"
import { stillPublished } from "../../../services/node/InstallPolicy.js"
import type { Ledger } from "../../../services/node/Ledger.js"
import type { PackageDirectory } from "../../../services/node/PackageDirectory.js"
import type { ApprovalRecord, PackageRecords } from "../../../services/node/PackageRecords.js"
import type { TaskApprovals } from "../../../services/node/TaskApprovals.js"

export interface Sources {
  readonly records: PackageRecords["Type"]
  readonly approvals: TaskApprovals["Type"]
  readonly ledger: Ledger["Type"]
  readonly directory: PackageDirectory["Type"]
  /** How long the directory is waited for, per approval. */
  readonly wait: Duration.DurationInput
}

export const make = ({ approvals, directory, ledger, records, wait }: Sources) =>
  Effect.gen(function*() {
    const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
    // Listed only while the directory still publishes that exact package, version and digest (a folder changed
    // on disk, a marketplace listing moved on or a directory that did not answer in time: not listed for now).
    const published = (approval: ApprovalRecord) =>
      directory.find(approval.packageId).pipe(
        Effect.timeoutOption(wait),
        Effect.map((found) => stillPublished(approval, Option.getOrUndefined(Option.flatten(found)))),
        Effect.orElseSucceed(() => false)
      )
    const open = (yield* records.waiting).filter((a) => a.expiresAt > at)
    const listed = yield* Effect.filter(open, published, { concurrency: 4 })
    const installs = listed.map((a): WaitingItem => ({
      kind: "install-approval",
      approvalId: a.approvalId,
      package: a.packageId,
      version: a.version,
      asks: a.asksFor,
      riskTier: a.riskTier,
      operationDigest: a.operationDigest,
      requestedAt: a.requestedAt,
      expiresAt: a.expiresAt
    }))
    const tasks = (yield* approvals.waiting).filter((a) => a.expiresAt > at).map((a): WaitingItem => ({
      kind: "task-approval",
      approvalId: a.approvalId,
      taskId: a.taskId,
      conversationId: a.conversationId,
      summary: `${a.packageId} · ${a.tool}`,
      origin: a.origin,
      operationDigest: a.operationDigest,
      requestedAt: a.requestedAt,
      expiresAt: a.expiresAt,
      input: a.input
    }))
    const effects = (yield* ledger.unknownEffects).map((e): WaitingItem => ({
      kind: "unknown-effect",
      effectId: e.effectId,
      taskId: e.taskId,
      conversationId: e.conversationId,
      summary: e.summary,
      recordedAt: e.recordedAt
    }))
    return { items: [...installs, ...tasks, ...effects], unknownEffects: new Set(effects.map((e) => e.kind === "unknown-effect" ? e.effectId : "")) }
  })
