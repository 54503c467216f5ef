/**
 * The `work` group: background work, the activity log, unknown effects and task approvals. GET /work lists the
 * turns' tasks (background work on this node, docs/decisions.md "Background work"); retry and cancel act on them.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { Activity } from "../../../services/node/Activity.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { BackgroundWork } from "../../../services/node/BackgroundWork.js"
import { Ledger } from "../../../services/node/Ledger.js"
import { isCard } from "../../../services/node/FileWriteRules.js"
import { MachineFileWrites } from "../../../services/node/MachineFileWrites.js"
import { PackageTools } from "../../../services/node/PackageTools.js"
import { TurnEngine } from "../../../services/node/TurnEngine.js"
import { wire } from "../http/Errors.js"
import { decidedWidgetCard } from "./OfferedActions.js"

export const WorkLive = HttpApiBuilder.group(NodeApi, "work", (handlers) =>
  Effect.gen(function*() {
    const ledger = yield* Ledger
    const audit = yield* AuditLog
    const tools = yield* PackageTools
    const activity = yield* Activity
    const engine = yield* TurnEngine
    const work = yield* BackgroundWork
    const fileWrites = yield* MachineFileWrites
    const widgetCard = yield* decidedWidgetCard

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.map(activity.work({ limit: urlParams.limit ?? 50, conversationId: urlParams.conversationId }), (work) => ({ work })))
      .handle("retry", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => work.retry(path.id, caller)).pipe(
          Effect.map((retried) => ({ accepted: true as const, ...retried })),
          wire
        ))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentCaller, (caller) => work.cancel(path.id, caller)).pipe(wire))
      .handle("activity", ({ urlParams }) => activity.activity({ limit: urlParams.limit ?? 50, before: urlParams.before }))
      .handle("reconcile", ({ path, payload }) =>
        Effect.gen(function*() {
          // PersonOnly already refused every machine surface: the caller is the person (text or voice).
          const caller = yield* CurrentCaller
          const settled = yield* ledger.reconcile(path.effectId, {
            outcome: payload.outcome,
            source: payload.source,
            by: caller.surface
          })
          const reconciled = settled.reconciled
          if (reconciled === null) return yield* Effect.dieMessage("a reconciled effect came back without its answer")
          yield* audit.append({
            kind: "effect-reconciled",
            conversationId: settled.conversationId ?? undefined,
            surface: caller.surface,
            channel: caller.channel,
            detail: {
              effectId: settled.effectId,
              taskId: settled.taskId,
              outcome: reconciled.outcome,
              source: reconciled.source,
              taskStatus: reconciled.taskStatus
            }
          })
          return {
            effectId: settled.effectId,
            outcome: reconciled.outcome,
            source: reconciled.source,
            reconciledAt: reconciled.at,
            reconciledBy: reconciled.by,
            taskId: settled.taskId,
            taskStatus: reconciled.taskStatus
          }
        }).pipe(wire))
      .handle("decideTaskApproval", ({ path, payload }) =>
        Effect.gen(function*() {
          const approval = yield* tools.decide(path.taskId, path.approvalId, payload.decision, payload.digest)
          // A widget file-write card continues no task: the machine client writes again (MachineFileWrites).
          if (isCard(approval)) {
            yield* fileWrites.decided(approval)
            return { taskId: path.taskId, approvalId: path.approvalId, decision: payload.decision, redispatched: false }
          }
          // A widget's card (an offered action, a job press) is settled by its own module, never continued as a turn.
          const card = yield* widgetCard(approval, payload.shownInstanceIds)
          if (Option.isSome(card)) {
            return { taskId: path.taskId, approvalId: path.approvalId, decision: payload.decision, redispatched: false, ...card.value }
          }
          if (approval.status !== "granted") {
            return { taskId: path.taskId, approvalId: path.approvalId, decision: payload.decision, redispatched: false }
          }
          const continued = yield* engine.continueTask(approval)
          if (continued !== null) yield* tools.continued(approval.approvalId, continued)
          return { taskId: path.taskId, approvalId: path.approvalId, decision: payload.decision, redispatched: continued !== null }
        }).pipe(wire))
  }))
