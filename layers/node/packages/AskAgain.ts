/**
 * Task approvals on the node's clock: a fiber per waiting approval (in a FiberMap keyed by approval id, restored
 * at start, due ones expiring at once) moves it to `expired` when its hour is up, which writes the inbox notice
 * (SqlTaskApprovals); ask-again of that notice asks the same operation anew, once.
 */
import { Clock, DateTime, Duration, Effect, FiberMap, Option } from "effect"
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

export const make = ({ approvalTtl, approvals, audit, records }: Options) =>
  Effect.gen(function*() {
    const fibers = yield* FiberMap.make<string>()

    const schedule = (approval: TaskApproval) =>
      Effect.gen(function*() {
        const remaining = Date.parse(approval.expiresAt) - (yield* Clock.currentTimeMillis)
        yield* FiberMap.run(
          fibers,
          approval.approvalId,
          Effect.sleep(Duration.millis(Math.max(0, remaining))).pipe(
            Effect.zipRight(Clock.currentTimeMillis),
            Effect.flatMap((at) => approvals.transition(approval.approvalId, ["asked"], "expired", iso(at)))
          )
        )
      })

    yield* Effect.flatMap(approvals.waiting, Effect.forEach(schedule, { discard: true }))

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
        yield* schedule(approval)
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

    return {
      schedule,
      /** A decision took the approval out of `asked`: its expiry has nothing left to do. */
      decided: (approvalId: string) => FiberMap.remove(fibers, approvalId),
      askAgain
    }
  })
