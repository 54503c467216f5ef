/**
 * Ask-again of an expired task approval (its inbox notice's action): the same operation asked anew, with a new id
 * and a new lifetime, once. The expiry itself, and its notice, are the store's (SqlTaskApprovals).
 */
import { Clock, DateTime, Duration, Effect, Option } from "effect"
import { makeId } from "../../../services/common/Ids.js"
import type { AuditLog } from "../../../services/node/AuditLog.js"
import type { PackageRecords } from "../../../services/node/PackageRecords.js"
import type { AskAgainOutcome } from "../../../services/node/PackageTools.js"
import type { TaskApproval, TaskApprovals } from "../../../services/node/TaskApprovals.js"

export interface Options {
  readonly approvals: TaskApprovals["Type"]
  readonly records: PackageRecords["Type"]
  readonly audit: AuditLog["Type"]
  readonly approvalTtl: Duration.Duration
}

const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

export const make = ({ approvalTtl, approvals, audit, records }: Options) => {
  const askAgain = (expiredId: string): Effect.Effect<AskAgainOutcome> =>
    Effect.gen(function*() {
      const found = yield* approvals.get(expiredId)
      if (Option.isNone(found) || found.value.status !== "expired") return { _tag: "NotExpired" } as const
      const expired = found.value
      const installed = yield* records.installedOne(expired.packageId)
      if (Option.isNone(installed) || installed.value.digest !== expired.packageDigest) {
        return { _tag: "PackageGone" } as const
      }
      const requested = yield* Clock.currentTimeMillis
      const approval: TaskApproval = {
        ...expired,
        approvalId: yield* makeId("tap"),
        status: "asked",
        requestedAt: iso(requested),
        expiresAt: iso(requested + Duration.toMillis(approvalTtl)),
        decidedAt: null,
        continuedAs: null
      }
      if (!(yield* approvals.askAgain(expiredId, approval))) return { _tag: "AlreadyAskedAgain" } as const
      yield* audit.append({
        kind: "task-approval-asked",
        conversationId: approval.conversationId,
        surface: approval.origin,
        detail: {
          taskId: approval.taskId,
          packageId: approval.packageId,
          tool: approval.tool,
          approvalId: approval.approvalId,
          operationDigest: approval.operationDigest,
          askedAgainOf: expiredId
        }
      })
      return { _tag: "AskedAgain", approval } as const
    })

  return { askAgain }
}
