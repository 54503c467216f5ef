/**
 * ConversationActivity over what the node runs today: running turns (and the messages waiting for them), open
 * questions, task approvals waiting for the person and unknown effects in the ledger. Jobs, background work and
 * widget actions are added by their own issues as further `ActivitySource`s (`layer([...sources])`).
 */
import { Effect, Layer, Option } from "effect"
import { type ActivitySource, ConversationActivity, type Unsettled } from "../../services/node/ConversationActivity.js"
import { ConversationStore } from "../../services/node/ConversationStore.js"
import { Jobs } from "../../services/node/Jobs.js"
import { Ledger } from "../../services/node/Ledger.js"
import { OfferedActions } from "../../services/node/OfferedActions.js"
import { TaskApprovals } from "../../services/node/TaskApprovals.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"
import { WidgetPressLog } from "../../services/node/WidgetPressLog.js"

export const make = (extra: ReadonlyArray<ActivitySource>) =>
  Effect.gen(function*() {
    const engine = yield* TurnEngine
    const store = yield* ConversationStore
    const approvals = yield* TaskApprovals
    const ledger = yield* Ledger
    const jobs = yield* Jobs
    const presses = yield* WidgetPressLog
    // Optional: a node built without offered actions (tests of deletion alone) has none to wait for.
    const offers = yield* Effect.serviceOption(OfferedActions)
    const own: ReadonlyArray<ActivitySource> = [
      (conversationId) =>
        Effect.map(engine.isRunning(conversationId), (running): ReadonlyArray<Unsettled> =>
          running ? [{ kind: "turn", id: conversationId }] : []),
      (conversationId) =>
        Effect.map(store.openQuestions, (questions) =>
          questions.filter((q) => q.conversationId === conversationId).map((q): Unsettled => ({ kind: "question", id: q.id }))),
      (conversationId) =>
        Effect.map(approvals.waiting, (waiting) =>
          waiting.filter((a) => a.conversationId === conversationId).map((a): Unsettled => ({
            kind: "task-approval",
            id: a.approvalId
          }))),
      (conversationId) =>
        Effect.map(ledger.unknownEffects, (effects) =>
          effects.filter((e) => e.conversationId === conversationId).map((e): Unsettled => ({
            kind: "unknown-effect",
            id: e.effectId
          }))),
      (conversationId) =>
        Effect.map(jobs.runningIn(conversationId), (running): ReadonlyArray<Unsettled> =>
          running ? [{ kind: "job", id: conversationId }] : []),
      (conversationId) =>
        Effect.map(presses.settling(conversationId), (settling): ReadonlyArray<Unsettled> =>
          settling ? [{ kind: "widget-action", id: conversationId }] : []),
      // An offered action handed to the app and not answered yet settles too.
      (conversationId) =>
        Option.isNone(offers) ? Effect.succeed([]) : Effect.map(offers.value.settling(conversationId), (settling): ReadonlyArray<Unsettled> =>
          settling ? [{ kind: "widget-action", id: conversationId }] : [])
    ]
    const sources = [...own, ...extra]
    return ConversationActivity.of({
      unsettled: (conversationId) =>
        Effect.map(
          Effect.forEach(sources, (source) => source(conversationId), { concurrency: "unbounded" }),
          (answers) => answers.flat()
        )
    })
  })

export const layer = (extra: ReadonlyArray<ActivitySource> = []) => Layer.effect(ConversationActivity, make(extra))
