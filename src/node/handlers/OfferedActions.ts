/**
 * The `offeredActions` group: the requests a widget should perform, and the app's report of what it did. Also the
 * decide route's dispatch for the cards of offered actions and job presses (`decidedWidgetCard`), kept here so
 * Work.ts only calls it.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { JobApprovals } from "../../../services/node/JobApprovals.js"
import { OfferedActions } from "../../../services/node/OfferedActions.js"
import type { TaskApproval } from "../../../services/node/TaskApprovals.js"
import { wire } from "../http/Errors.js"

export const OfferedActionsLive = HttpApiBuilder.group(NodeApi, "offeredActions", (handlers) =>
  Effect.gen(function*() {
    const offers = yield* OfferedActions
    return handlers
      .handle("waiting", ({ path }) =>
        wire(offers.waiting(path.id, path.instanceId)).pipe(Effect.map((list) => ({
          requests: list.map(({ action, input, instanceId, requestId, requestedAt, status }) => ({
            requestId,
            instanceId,
            action,
            input,
            status,
            requestedAt
          }))
        }))))
      .handle("report", ({ path, payload }) =>
        wire(offers.report(path.id, path.instanceId, path.requestId, payload)).pipe(Effect.map((settled) => ({
          requestId: settled.requestId,
          status: settled.status as "done" | "refused" | "unknown",
          effectId: settled.effectId
        }))))
  }))

/**
 * What a decided task approval adds when it is a widget's card: an offered action (performed or not) or a job
 * press (the job the grant started). `none` for a turn's card, which the task's continuation handles.
 */
export const decidedWidgetCard = Effect.gen(function*() {
  const offers = yield* OfferedActions
  const jobs = yield* JobApprovals
  return (approval: TaskApproval, shownInstanceIds: ReadonlyArray<string> | undefined) =>
    Effect.gen(function*() {
      const offered = yield* offers.decided(approval, shownInstanceIds)
      if (Option.isSome(offered)) return Option.some<WidgetCard>(offered.value)
      return Option.map(yield* jobs.decided(approval), (job): WidgetCard => job)
    })
})

type WidgetCard = { readonly performed?: boolean; readonly requestId?: string; readonly jobId?: string | null }
