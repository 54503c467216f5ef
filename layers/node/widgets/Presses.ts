/**
 * WidgetPresses over the instance store, the press log, the package tools (policy, ledger, service), the turn
 * engine and the conversation store. The order is the point: the shape, the instance and its binding; a stored
 * answer for a known invocation id; then the checks of the instance as it is now (install, revision, digest,
 * rate, input), none of which changes anything; only then the invocation id is claimed and the call made.
 */
import { Effect, Either, HashMap, Layer, Option, Ref } from "effect"
import type { RiskClass } from "../../../schema/node/Manifest.js"
import type { Caller } from "../../../schema/node/Security.js"
import type { ActionPress } from "../../../schema/node/Widget.js"
import { makeId } from "../../../services/common/Ids.js"
import { OneShot } from "../../../services/common/OneShot.js"
import { type AuditEntry, AuditLog } from "../../../services/node/AuditLog.js"
import { JobApprovals } from "../../../services/node/JobApprovals.js"
import { isJobTool, Jobs } from "../../../services/node/Jobs.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import { PackageTools } from "../../../services/node/PackageTools.js"
import { shapeProblem } from "../../../services/node/PressRules.js"
import { Transactions } from "../../../services/node/Transactions.js"
import { TurnEngine } from "../../../services/node/TurnEngine.js"
import {
  InstanceUnknown,
  PressFailed,
  PressInputInvalid,
  PressSchemaInvalid,
  PressUnsupported,
  type WidgetError
} from "../../../services/node/WidgetErrors.js"
import { type WidgetBinding, type WidgetInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { WidgetPressLog } from "../../../services/node/WidgetPressLog.js"
import { type PressAnswer, WidgetPresses } from "../../../services/node/WidgetPresses.js"
import * as InputChecks from "../packages/InputChecks.js"
import { agentRequest } from "./AgentPress.js"
import { callOutcome } from "./CallOutcome.js"
import { notStarted, type Outcome, replay, type Settle, settled, stored } from "./PressAnswers.js"
import * as PressChecks from "./PressChecks.js"

/** A running press's outcome for identical presses to wait on; null until one comes. */
type Waiting = OneShot<PressAnswer, WidgetError> | null

export const make = Effect.gen(function*() {
  const instances = yield* WidgetInstances
  const log = yield* WidgetPressLog
  const tools = yield* PackageTools
  const jobs = yield* Jobs
  const jobApprovals = yield* JobApprovals
  const engine = yield* TurnEngine
  const store = yield* ConversationStore
  const audit = yield* AuditLog
  const transactions = yield* Transactions
  const checks = yield* InputChecks.make
  const { current, installed, rate, viewState } = yield* PressChecks.make
  /**
   * Presses of this process still running, by instance and invocation id: an identical press waits for the first.
   * The outcome to wait on is made only when a second press comes (null until then): a press that nothing
   * overlaps, nearly every one, makes none (services/common/OneShot.ts: what each one costs).
   */
  const inflight = yield* Ref.make(HashMap.empty<string, Waiting>())
  // Presses the last process left running were cut off: they answer ACTION_INTERRUPTED from now on.
  const interrupted = yield* log.interruptRunning
  if (interrupted > 0) yield* Effect.logWarning(`${interrupted} widget presses were cut off by the last stop`)

  /** The row of the timeline a press that ran (or may have) writes; the revision moves with it. */
  const recordPress = Effect.fnUntraced(function*(
    caller: Caller,
    instance: WidgetInstance,
    binding: WidgetBinding,
    press: ActionPress,
    taskId: string,
    output: unknown,
    status: "done" | "failed"
  ) {
      yield* store.insertMessage({
        conversationId: instance.conversationId,
        role: "assistant",
        origin: caller.surface,
        channel: caller.channel,
        status: "complete",
        taskId,
        hostWritten: { kind: "widget-action", version: 1 },
        blocks: [{
          type: "tool",
          toolCallId: press.invocationId,
          name: `${instance.widgetId}.${binding.id}`,
          input: press.input ?? null,
          output,
          status,
          packageId: instance.packageId
        }]
      })
      return yield* instances.advance(instance.conversationId, instance.instanceId)
    })

  /**
   * A tool binding: the package tool through policy and ledger (PackageTools), its outcome as the press's answer;
   * the call's audit row, the timeline row and the revision are left to the press's closing transaction (the call's
   * row written with the press's own, without a commit of its own).
   */
  const pressTool = Effect.fnUntraced(function*(
    caller: Caller,
    instance: WidgetInstance,
    binding: Extract<WidgetBinding, { kind: "tool" }>,
    press: ActionPress
  ) {
      const taskId = yield* makeId("task")
      const offered = (yield* tools.offered).find((t) => t.packageId === instance.packageId && t.tool === binding.tool)
      if (offered === undefined) {
        // The service package no longer offers the tool (its manifest changed under the same install): nothing sent.
        return settled(Either.left(
          new PressFailed({
            failure: "tool-not-offered",
            outcome: "refused",
            mayHaveRun: false,
            recorded: false,
            workflow: [{ step: "call", status: "not-run", code: "SERVICE_UNREACHABLE" }]
          })
        ) satisfies Outcome)
      }
      const outcome = yield* tools.call(
        { taskId, conversationId: instance.conversationId, origin: caller.surface, channel: caller.channel, auditByCaller: true },
        offered.name,
        press.input
      )
      const mapped = callOutcome(outcome, { taskId, invocationId: press.invocationId, instanceId: instance.instanceId })
      return {
        write: mapped.recordsTimeline
          ? Effect.map(
            recordPress(caller, instance, binding, press, taskId, outcome.output, outcome.status),
            (revision): Outcome => Either.map(mapped.answer, (body) => (body.outcome === "done" ? { ...body, revision } : body))
          )
          : Effect.succeed(mapped.answer),
        audit: outcome.audit
      } satisfies Settle
    })

  /** An agent binding: a turn of its own, its instruction from the manifest and the widget's description as data. */
  const pressAgent = Effect.fnUntraced(function*(caller: Caller, instance: WidgetInstance, press: ActionPress, text: string) {
    const ticket = yield* engine.submit({
      conversationId: instance.conversationId,
      request: { text },
      caller,
      route: "answer",
      hostWritten: { kind: "widget-action", version: 1 }
    }).pipe(Effect.orDie)
    const taskId = ticket.taskId ?? (yield* makeId("task"))
    return {
      write: Effect.as(
        instances.advance(instance.conversationId, instance.instanceId),
        Either.right({ outcome: "background" as const, invocationId: press.invocationId, taskId }) satisfies Outcome
      )
    } satisfies Settle
  })

  /**
   * A job tool (`execution: {kind: job}`): the execution policy first (a deny rule 403, an asking mode a card and
   * 202, the job started by the grant); then the jobs runner records the job and runs it in the background, and the
   * press answers `done` with its `job_` reference at once. A node that cannot run it answers 503 JOB_UNAVAILABLE.
   */
  const pressJob = Effect.fnUntraced(function*(
    caller: Caller,
    instance: WidgetInstance,
    binding: Extract<WidgetBinding, { kind: "tool" }>,
    press: ActionPress,
    about: { readonly risk: RiskClass; readonly packageDigest: string }
  ) {
      const start = {
        conversationId: instance.conversationId,
        instanceId: instance.instanceId,
        bindingId: binding.id,
        packageId: instance.packageId,
        version: instance.version,
        tool: binding.tool,
        input: (press.input ?? {}) as Readonly<Record<string, unknown>>,
        origin: caller.surface
      }
      // The execution policy first: a deny rule refuses, an asking mode leaves a card and starts nothing yet.
      const gateTask = yield* makeId("task")
      const gate = yield* jobApprovals.gate(start, { taskId: gateTask, ...about })
      if (gate._tag === "Deny") {
        return settled(notStarted("policy-refused", { step: "policy", status: "failed", code: "POLICY_REFUSED" }))
      }
      if (gate._tag === "Asked") {
        const waiting: Outcome = Either.right({
          outcome: "approval-required" as const,
          invocationId: press.invocationId,
          approvalRequired: { approvalId: gate.approvalId },
          taskId: gateTask
        })
        return {
          write: Effect.as(
            recordPress(caller, instance, binding, press, gateTask, { approvalRequired: { approvalId: gate.approvalId } }, "failed"),
            waiting
          )
        } satisfies Settle
      }
      const started = yield* Effect.either(jobs.start(start))
      if (Either.isLeft(started)) {
        return settled(notStarted("job-unavailable", { step: "start-job", status: "not-run", code: "JOB_UNAVAILABLE" }))
      }
      const taskId = yield* makeId("task")
      const job = started.right.jobId
      return {
        write: Effect.map(
          recordPress(caller, instance, binding, press, taskId, { job }, "done"),
          (revision): Outcome =>
            Either.right({
              outcome: "done" as const,
              invocationId: press.invocationId,
              instanceId: instance.instanceId,
              revision,
              job,
              taskId
            })
        )
      } satisfies Settle
    })

  /** The press's writes after its call, in the closing transaction. */
  const closing = Effect.fnUntraced(function*(caller: Caller, instance: WidgetInstance, press: ActionPress, settle: Settle) {
    const outcome = yield* settle.write
    yield* log.answer(instance.instanceId, press.invocationId, stored(outcome))
    const row: AuditEntry = {
      kind: "widget-press",
      conversationId: instance.conversationId,
      surface: caller.surface,
      channel: caller.channel,
      detail: {
        instanceId: instance.instanceId,
        actionBindingId: press.actionBindingId,
        invocationId: press.invocationId,
        outcome: Either.match(outcome, { onLeft: (failed) => failed.failure, onRight: (body) => body.outcome })
      }
    }
    // The call's row first, as when the tool path wrote it itself.
    yield* audit.appendAll(settle.audit === undefined ? [row] : [settle.audit, row])
    return outcome
  })

  /** The claim, the press's run and its closing transaction. */
  const claimed = Effect.fnUntraced(function*(caller: Caller, instance: WidgetInstance, press: ActionPress, run: Effect.Effect<Settle>) {
    const earlier = yield* log.claim({
      conversationId: instance.conversationId,
      instanceId: instance.instanceId,
      invocationId: press.invocationId,
      actionBindingId: press.actionBindingId
    })
    if (Option.isSome(earlier)) return yield* replay(earlier.value, press.invocationId)
    // Once claimed, the press runs to its answer even when its request goes away: the answer is stored.
    const settle = yield* run
    const outcome = yield* transactions.atomically(closing(caller, instance, press, settle))
    return yield* Either.match(outcome, { onLeft: Effect.fail, onRight: Effect.succeed })
  })

  const onceMasked = Effect.fnUntraced(function*(
    restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
    caller: Caller,
    instance: WidgetInstance,
    press: ActionPress,
    run: Effect.Effect<Settle>
  ) {
    const key = `${instance.instanceId}\u0000${press.invocationId}`
    const earlier = yield* Ref.modify(inflight, (map): readonly [OneShot<PressAnswer, WidgetError> | undefined, HashMap.HashMap<string, Waiting>] => {
      const other = HashMap.get(map, key)
      if (Option.isNone(other)) return [undefined, HashMap.set(map, key, null)]
      if (other.value !== null) return [other.value, map]
      const outcome = new OneShot<PressAnswer, WidgetError>()
      return [outcome, HashMap.set(map, key, outcome)]
    })
    if (earlier !== undefined) return yield* restore(earlier.wait())
    const result = yield* Effect.exit(claimed(caller, instance, press, run))
    const waiting = yield* Ref.modify(inflight, (map) => [HashMap.get(map, key), HashMap.remove(map, key)] as const)
    if (Option.isSome(waiting) && waiting.value !== null) waiting.value.done(result)
    return yield* result
  })

  /**
   * Claims the invocation id and runs the press once; an identical press of this process waits for the first. The
   * claim is its own commit, durable before the call goes out (rule 6); everything written after the call (the
   * timeline row, the revision, the stored answer, the audit row) is one transaction, so a press pays one commit
   * after its call instead of four.
   */
  const once = (
    caller: Caller,
    instance: WidgetInstance,
    press: ActionPress,
    run: Effect.Effect<Settle>
  ): Effect.Effect<PressAnswer, WidgetError> =>
    Effect.uninterruptibleMask((restore) => onceMasked(restore, caller, instance, press, run))

  const press: WidgetPresses["Type"]["press"] = Effect.fnUntraced(function*(caller, conversationId, instanceId, press) {
    const problem = shapeProblem(press)
    if (problem !== undefined) return yield* new PressSchemaInvalid({ reason: problem })
    // The instance and an earlier press of this invocation id in one read; the earlier press matters only below.
    const found = yield* instances.forPress(conversationId, instanceId, press.invocationId)
    if (Option.isNone(found)) return yield* new InstanceUnknown({ instanceId })
    const { earlier, instance } = found.value
    const binding = instance.bindings.find((b) => b.id === press.actionBindingId)
    if (binding === undefined) {
      return yield* new PressUnsupported({ actionBindingId: press.actionBindingId, reason: "unknown-binding" })
    }
    if (press.variant !== undefined) {
      if (binding.kind !== "view-state") {
        return yield* new PressUnsupported({ actionBindingId: binding.id, reason: "variant-on-other-binding" })
      }
      return yield* viewState(instance, binding, press, press.sequence!)
    }
    if (binding.kind === "view-state") {
      return yield* new PressUnsupported({ actionBindingId: binding.id, reason: "player-needs-variant" })
    }
    // Rule 6 first: a repeat is answered as it was, whatever the instance has become since.
    const running = HashMap.has(yield* Ref.get(inflight), `${instance.instanceId}\u0000${press.invocationId}`)
    if (Option.isSome(earlier) && !running) return yield* replay(earlier.value, press.invocationId)
    const pkg = yield* installed(instance)
    yield* current(instance, binding, press)
    if (binding.kind === "tool") {
      const tool = pkg?.manifest.tools.find((t) => t.name === binding.tool)
      if (tool !== undefined && pkg !== undefined) {
        const problem = yield* checks.check(pkg.digest, tool, press.input)
        if (problem !== undefined) return yield* new PressInputInvalid({ field: "input", reason: "input", problem })
      }
      yield* rate(instance, binding)
      const run = tool !== undefined && isJobTool(tool) && pkg !== undefined
        ? pressJob(caller, instance, binding, press, { risk: tool.risk, packageDigest: pkg.digest })
        : pressTool(caller, instance, binding, press)
      return yield* once(caller, instance, press, run)
    }
    const text = yield* agentRequest(log, instance, binding, press)
    yield* rate(instance, binding)
    return yield* once(caller, instance, press, pressAgent(caller, instance, press, text))
  })

  return WidgetPresses.of({ press })
})

export const layer = Layer.effect(WidgetPresses, make)
