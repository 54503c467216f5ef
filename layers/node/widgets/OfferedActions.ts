/**
 * OfferedActions over the instance store, the execution policy, task approvals and the effect ledger. The order
 * of a request is the point: its shape, the widget in this conversation, the action it offers, the input's size,
 * the install it was placed from, the policy; then either a card (the same card while an identical one waits, at
 * most 8 waiting per conversation) or the ledger first and only then the hand-over to the app. The widget's answer
 * settles the request once: `done` and `refuse(code, why)` are trustworthy answers, anything else leaves an unknown
 * effect the inbox asks about, and nothing is ever sent again.
 */
import { Clock, Config, DateTime, Deferred, Duration, Effect, Either, HashMap, Layer, Option, ParseResult, Ref, Schema } from "effect"
import { DenyRules, MachineTurns } from "../../../schema/node/Preferences.js"
import { maxOfferedActionInputChars } from "../../../schema/node/Widget.js"
import { makeId } from "../../../services/common/Ids.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { Ledger } from "../../../services/node/Ledger.js"
import { OfferedReportInvalid, OfferedRequestAnswered, OfferedRequestNotFound } from "../../../services/node/OfferedActionErrors.js"
import {
  maxResultChars,
  maxWaitingActionCards,
  offeredDigest,
  offeredVerdict,
  inputTooLong,
  settledStatus,
  stepTool
} from "../../../services/node/OfferedActionRules.js"
import {
  type OfferedRequest,
  OfferedActions,
  type PerformContext,
  type PerformOutcome,
  type WidgetReport
} from "../../../services/node/OfferedActions.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"
import { InstanceUnknown } from "../../../services/node/WidgetErrors.js"
import { hostPackageId, type WidgetInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import * as SqlOfferedActions from "../sql/SqlOfferedActions.js"

export const PerformInput = Schema.Struct({
  instanceId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  action: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  input: Schema.optional(Schema.Unknown)
})

export const Settings = Config.all({
  /** How long the asking turn waits for the widget's answer before its effect is called unknown. */
  wait: Config.integer("CC_OFFERED_ACTION_WAIT_MS").pipe(Config.map(Duration.millis), Config.withDefault(Duration.seconds(30))),
  /** A card nobody decided within this expires (as the other task approvals). */
  approvalTtl: Config.succeed(Duration.hours(1))
})

const messages: Record<string, string> = {
  INVALID_INPUT: "The request does not fit perform_widget_action's input; nothing was sent.",
  INSTANCE_UNKNOWN: "No such widget in this conversation.",
  ACTION_NOT_OFFERED: "The widget does not offer this action; nothing was sent.",
  NOT_INSTALLED: "The widget's package is no longer installed as it was placed; nothing was sent.",
  POLICY_REFUSED: "A deny rule of the person refuses this action; it was not performed.",
  APPROVALS_PENDING: "Too many action cards wait for the person in this conversation; nothing was asked or sent.",
  APPROVAL_REQUIRED: "The person must approve this action first; the card shows the whole input. Do not retry it.",
  LEDGER_UNAVAILABLE: "The effect ledger cannot be written, so the action was not sent."
}

export const make = Effect.gen(function*() {
  const settings = yield* Effect.orDie(Settings)
  const instances = yield* WidgetInstances
  const records = yield* PackageRecords
  const preferences = yield* PreferenceStore
  const approvals = yield* TaskApprovals
  const ledger = yield* Ledger
  const audit = yield* AuditLog
  const rows = yield* SqlOfferedActions.make
  /** The turns waiting for a widget's answer, by request id. */
  const waiting = yield* Ref.make(HashMap.empty<string, Deferred.Deferred<OfferedRequest>>())
  const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))
  const now = Effect.map(Clock.currentTimeMillis, iso)
  const interrupted = yield* rows.interruptRequested(yield* now)
  if (interrupted > 0) yield* Effect.logWarning(`${interrupted} widget action requests were cut off by the last stop`)

  const preference = <A, I>(key: string, schema: Schema.Schema<A, I>, fallback: A) =>
    Effect.map(preferences.get(key), (state) =>
      Option.getOrElse(Option.flatMap(state, (s) => Schema.decodeUnknownOption(schema)(s.value)), () => fallback))

  const refused = (code: string, extra: Record<string, unknown> = {}, endsTurn = false): PerformOutcome => ({
    status: "failed",
    endsTurn,
    output: { error: code, message: messages[code] ?? "The action was not performed.", ...extra }
  })

  const details = (instance: WidgetInstance, action: string, outcome?: "approval-required" | "denied" | "not-sent" | "unknown-effect") => ({
    packageId: instance.packageId,
    risk: "local-write" as const,
    summary: `${instance.widgetId} · ${action}${outcome === undefined ? "" : `: ${outcome}`}`,
    ...(outcome === undefined ? {} : { outcome })
  })

  /** The ledger first; a request it cannot record is not handed over. */
  const recordEffect = (request: OfferedRequest, instance: WidgetInstance) =>
    ledger.record({
      taskId: request.taskId,
      conversationId: request.conversationId,
      packageId: instance.packageId,
      packageDigest: instance.contentDigest,
      tool: stepTool(instance.widgetId, request.action),
      risk: "local-write",
      origin: request.origin,
      input: request.input,
      summary: `${instance.widgetId} · ${request.action}`
    })

  /** What the model reads of a settled request. */
  const answerOf = (request: OfferedRequest, instance: WidgetInstance): PerformOutcome => {
    const base = { requestId: request.requestId, instanceId: request.instanceId, action: request.action }
    switch (request.status) {
      case "done":
        return { status: "done", output: { ...base, outcome: "done", result: request.result }, details: details(instance, request.action) }
      case "refused":
        // The widget refused before changing anything: a trustworthy answer, quoted as data.
        return {
          status: "failed",
          output: { ...base, outcome: "refused", code: request.code, why: request.why },
          details: { ...details(instance, request.action), code: request.code ?? undefined }
        }
      default:
        return {
          status: "failed",
          endsTurn: true,
          output: {
            ...base,
            outcome: "unknown-effect",
            effectId: request.effectId,
            mayHaveRun: true,
            note: "Whether the widget changed anything is unknown; the person will be asked. Do not try it again."
          },
          details: { ...details(instance, request.action, "unknown-effect"), effectId: request.effectId ?? undefined }
        }
    }
  }

  /** Gives up on a request the widget did not answer in time: its effect is unknown (one conditional write). */
  const giveUp = (request: OfferedRequest, reason: "timed-out" | "cancelled") =>
    Effect.gen(function*() {
      const code = reason === "timed-out" ? "SERVICE_TIMED_OUT" : "SERVICE_CANCELLED"
      const moved = yield* rows.settle(request.requestId, "requested", "unknown", { at: yield* now, code })
      if (moved && request.effectId !== null) {
        yield* ledger.unknown(request.effectId, reason).pipe(
          Effect.catchAll(() => Effect.logWarning("An unknown widget action could not be recorded; start-up will find it sent"))
        )
      }
      return Option.getOrElse(yield* rows.get(request.requestId), () => request)
    })

  const perform = (context: PerformContext, raw: unknown) =>
    Effect.gen(function*() {
      const decoded = Schema.decodeUnknownEither(PerformInput)(raw)
      if (Either.isLeft(decoded)) return refused("INVALID_INPUT", { problem: ParseResult.TreeFormatter.formatErrorSync(decoded.left) })
      const { action, instanceId } = decoded.right
      const input = decoded.right.input ?? null
      const found = yield* instances.get(context.conversationId, instanceId)
      if (Option.isNone(found)) return refused("INSTANCE_UNKNOWN", { instanceId })
      const instance = found.value
      if (!instance.offeredActions.includes(action)) {
        return { ...refused("ACTION_NOT_OFFERED", { action, offered: instance.offeredActions }), details: details(instance, action, "not-sent") }
      }
      if (inputTooLong(input)) {
        return {
          ...refused("INVALID_INPUT", { reason: "input-too-long", limit: maxOfferedActionInputChars }),
          details: details(instance, action, "not-sent")
        }
      }
      if (instance.packageId !== hostPackageId) {
        const pkg = yield* records.installedOne(instance.packageId)
        if (Option.isNone(pkg) || pkg.value.contentDigest !== instance.contentDigest) {
          return { ...refused("NOT_INSTALLED"), details: details(instance, action, "not-sent") }
        }
      }
      const tool = stepTool(instance.widgetId, action)
      const verdict = offeredVerdict({ origin: context.origin, packageId: instance.packageId, tool }, {
        machineTurns: yield* preference("execution.machineTurns", MachineTurns, "default"),
        denyRules: yield* preference("execution.denyRules", DenyRules, [])
      })
      const digest = offeredDigest(instance.instanceId, instance.contentDigest, action, input)
      const at = yield* Clock.currentTimeMillis
      const request: OfferedRequest = {
        requestId: yield* makeId("ofr"),
        conversationId: context.conversationId,
        instanceId,
        taskId: context.taskId,
        origin: context.origin,
        action,
        input,
        operationDigest: digest,
        approvalId: null,
        effectId: null,
        status: "requested",
        code: null,
        why: null,
        result: null,
        requestedAt: iso(at),
        answeredAt: null
      }
      const auditAs = { conversationId: context.conversationId, surface: context.origin, channel: context.channel === "voice" ? "voice-agent" : context.channel }
      if (verdict._tag === "Deny") {
        yield* audit.append({ kind: "widget-action-denied", ...auditAs, detail: { instanceId, action, rule: verdict.rule } })
        return { ...refused("POLICY_REFUSED"), details: { ...details(instance, action, "denied"), code: "POLICY_REFUSED" } }
      }
      if (verdict._tag === "Ask") {
        const card = (approvalId: string, same: boolean): PerformOutcome => ({
          ...refused("APPROVAL_REQUIRED", {
            approvalId,
            sameCard: same,
            card: { instanceId, action, input, operationDigest: digest }
          }, true),
          details: { ...details(instance, action, "approval-required"), code: "APPROVAL_REQUIRED", approvalId }
        })
        // An identical request whose card still waits gets that card, even at the bound.
        const same = yield* rows.waitingCard(context.conversationId, digest, iso(at))
        if (Option.isSome(same) && same.value.approvalId !== null) return card(same.value.approvalId, true)
        if ((yield* rows.waitingCards(context.conversationId, iso(at))) >= maxWaitingActionCards) {
          return {
            ...refused("APPROVALS_PENDING", { limit: maxWaitingActionCards }),
            details: { ...details(instance, action, "not-sent"), code: "APPROVALS_PENDING" }
          }
        }
        const approvalId = yield* makeId("tap")
        yield* approvals.insert({
          approvalId,
          taskId: context.taskId,
          conversationId: context.conversationId,
          origin: context.origin,
          packageId: instance.packageId,
          packageDigest: instance.contentDigest,
          tool,
          risk: "local-write",
          input,
          operationDigest: digest,
          status: "asked",
          requestedAt: iso(at),
          expiresAt: iso(at + Duration.toMillis(settings.approvalTtl)),
          decidedAt: null,
          continuedAs: null
        })
        yield* rows.insert({ ...request, approvalId, status: "asked" })
        yield* audit.append({ kind: "widget-action-asked", ...auditAs, detail: { instanceId, action, approvalId, operationDigest: digest } })
        return card(approvalId, false)
      }
      // From the ledger record on, a stop cannot fall between writing the effect and handing the request over; a
      // stop while the widget works leaves the effect unknown (whether it acted by then is not known).
      return yield* Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const effect = yield* Effect.either(recordEffect(request, instance))
          if (Either.isLeft(effect)) {
            return { ...refused("LEDGER_UNAVAILABLE"), details: { ...details(instance, action, "not-sent"), code: "LEDGER_UNAVAILABLE" } }
          }
          const handed = { ...request, effectId: effect.right.effectId }
          const answer = yield* Deferred.make<OfferedRequest>()
          yield* Ref.update(waiting, HashMap.set(handed.requestId, answer))
          yield* rows.insert(handed)
          yield* audit.append({
            kind: "widget-action-requested",
            ...auditAs,
            detail: { instanceId, action, requestId: handed.requestId, effectId: handed.effectId }
          })
          context.emit({ requestId: handed.requestId, instanceId, action, input })
          const settled = yield* restore(Deferred.await(answer).pipe(Effect.timeoutOption(settings.wait))).pipe(
            Effect.flatMap(Option.match({ onNone: () => giveUp(handed, "timed-out"), onSome: Effect.succeed })),
            Effect.onInterrupt(() => giveUp(handed, "cancelled")),
            Effect.ensuring(Ref.update(waiting, HashMap.remove(handed.requestId)))
          )
          return answerOf(settled, instance)
        })
      )
    })

  const instanceHere = (conversationId: string, instanceId: string) =>
    Effect.flatMap(instances.get(conversationId, instanceId), Option.match({
      onNone: () => Effect.fail(new InstanceUnknown({ instanceId })),
      onSome: Effect.succeed
    }))

  const report = (conversationId: string, instanceId: string, requestId: string, report: WidgetReport) =>
    Effect.gen(function*() {
      yield* instanceHere(conversationId, instanceId)
      const found = yield* rows.get(requestId)
      if (Option.isNone(found) || found.value.conversationId !== conversationId || found.value.instanceId !== instanceId) {
        return yield* new OfferedRequestNotFound({ requestId })
      }
      const request = found.value
      if (request.status !== "requested") return yield* new OfferedRequestAnswered({ requestId, status: request.status })
      if (report.outcome === "refused" && report.code === undefined) {
        return yield* new OfferedReportInvalid({ field: "code", reason: "refusal-needs-code" })
      }
      if (report.result !== undefined && (JSON.stringify(report.result)?.length ?? 0) > maxResultChars) {
        return yield* new OfferedReportInvalid({ field: "result", reason: "result-too-long" })
      }
      const to = settledStatus(report.outcome)
      const moved = yield* rows.settle(requestId, "requested", to, {
        at: yield* now,
        code: report.outcome === "error" ? "WIDGET_ACTION_FAILED" : report.code,
        why: report.why,
        result: report.outcome === "done" ? report.result ?? null : undefined
      })
      if (!moved) {
        const current = Option.getOrElse(yield* rows.get(requestId), () => request)
        return yield* new OfferedRequestAnswered({ requestId, status: current.status })
      }
      if (request.effectId !== null) {
        const written = to === "unknown"
          // Any error but a refusal: whether the widget changed something is unknown; never retried.
          ? Effect.asVoid(ledger.unknown(request.effectId, "tool-failed"))
          : ledger.answer(request.effectId, { isError: to === "refused", output: to === "refused" ? { code: report.code, why: report.why } : report.result ?? null })
        yield* written.pipe(Effect.catchAll(() => Effect.logWarning("The answer of a widget action could not be recorded in the ledger")))
      }
      const settled = Option.getOrElse(yield* rows.get(requestId), () => request)
      yield* audit.append({
        kind: "widget-action-answered",
        conversationId,
        detail: { instanceId, requestId, action: request.action, outcome: report.outcome, effectId: request.effectId }
      })
      const turn = HashMap.get(yield* Ref.get(waiting), requestId)
      if (Option.isSome(turn)) yield* Deferred.succeed(turn.value, settled)
      return settled
    })

  const decided: OfferedActions["Type"]["decided"] = (approval, shown) =>
    Effect.gen(function*() {
      const found = yield* rows.byApproval(approval.approvalId)
      if (Option.isNone(found)) return Option.none()
      const request = found.value
      const at = yield* now
      if (approval.status !== "granted") {
        yield* rows.settle(request.requestId, "asked", "denied", { at })
        return Option.some({ performed: false, requestId: request.requestId })
      }
      // The grant is spent by this decision: approving one card approves nothing else.
      yield* approvals.transition(approval.approvalId, ["granted"], "used", at)
      const instance = yield* instances.get(request.conversationId, request.instanceId)
      const onPage = shown?.includes(request.instanceId) === true
      if (!onPage || Option.isNone(instance)) {
        // From the inbox or a page without the widget: approved, not performed, nothing sent.
        yield* rows.settle(request.requestId, "asked", "approved-not-performed", { at })
        yield* audit.append({ kind: "widget-action-approved-not-performed", conversationId: request.conversationId, surface: "person", detail: { requestId: request.requestId, approvalId: approval.approvalId } })
        return Option.some({ performed: false, requestId: request.requestId })
      }
      const effect = yield* Effect.either(recordEffect(request, instance.value))
      if (Either.isLeft(effect)) {
        yield* rows.settle(request.requestId, "asked", "approved-not-performed", { at, code: "LEDGER_UNAVAILABLE" })
        return Option.some({ performed: false, requestId: request.requestId })
      }
      const handed = yield* rows.hand(request.requestId, effect.right.effectId)
      if (!handed) return Option.some({ performed: false, requestId: request.requestId })
      yield* audit.append({ kind: "widget-action-requested", conversationId: request.conversationId, surface: "person", detail: { requestId: request.requestId, approvalId: approval.approvalId, effectId: effect.right.effectId } })
      return Option.some({ performed: true, requestId: request.requestId })
    })

  return OfferedActions.of({
    perform,
    settling: rows.anyRequested,
    waiting: (conversationId, instanceId) =>
      Effect.zipRight(instanceHere(conversationId, instanceId), rows.requested(conversationId, instanceId)),
    report,
    decided
  })
})

export const layer = Layer.effect(OfferedActions, make)
