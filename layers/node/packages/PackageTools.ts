/**
 * PackageTools over the installed packages, the service runtime, the execution policy, task approvals and the
 * effect ledger. The order of a call is the point: input checked, policy decided, service reached, ledger
 * written, and only then the call sent; whatever happens after sending without a trustworthy answer leaves an
 * unknown effect, also when the turn is interrupted in the middle.
 */
import { Clock, DateTime, Duration, Effect, Exit, Layer, Option, Ref, Schema, SynchronizedRef } from "effect"
import type { Tool } from "../../../schema/node/Manifest.js"
import { DenyRules, MachineTurns } from "../../../schema/node/Preferences.js"
import { makeId } from "../../../services/common/Ids.js"
import { type AuditEntry, AuditLog } from "../../../services/node/AuditLog.js"
import { decide as policy } from "../../../services/node/ExecutionPolicy.js"
import { Ledger, type NewEffect } from "../../../services/node/Ledger.js"
import {
  ApprovalAlreadyDecided,
  ApprovalExpired,
  ApprovalForged,
  ApprovalNotFound
} from "../../../services/node/PackageErrors.js"
import { type InstalledPackage, PackageRecords } from "../../../services/node/PackageRecords.js"
import {
  type CallContext,
  type CallDetails,
  type CallOutcome,
  describe,
  type OfferedTool,
  PackageTools,
  toolNames
} from "../../../services/node/PackageTools.js"
import { type PreferenceState, PreferenceStore } from "../../../services/node/PreferenceStore.js"
import {
  type ServiceCallError,
  type ServicePackage,
  ServiceRuntime,
  type ServiceToolResult
} from "../../../services/node/ServiceRuntime.js"
import { type TaskApproval, TaskApprovals } from "../../../services/node/TaskApprovals.js"
import * as AskAgain from "./AskAgain.js"
import { bare, failures, messages, operationDigest, sha256 } from "./CallWords.js"
import * as InputChecks from "./InputChecks.js"
import { modelOutput } from "./ToolOutput.js"

export interface Options {
  /** A task approval nobody decided within this expires, ending its task (default one hour). */
  readonly approvalTtl?: Duration.DurationInput | undefined
}

export const defaultApprovalTtl = Duration.hours(1)

interface Entry {
  readonly offered: OfferedTool
  readonly pkg: InstalledPackage
  readonly tool: Tool
}

/** A call that went out: its effect (none for a read) and how it ended. */
interface Sent {
  readonly effectId: string | undefined
  readonly exit: Exit.Exit<ServiceToolResult, ServiceCallError>
}

interface Catalogue {
  readonly revision: number
  readonly offered: ReadonlyArray<OfferedTool>
  readonly byName: ReadonlyMap<string, Entry>
}

export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const records = yield* PackageRecords
    const runtime = yield* ServiceRuntime
    const ledger = yield* Ledger
    const approvals = yield* TaskApprovals
    const preferences = yield* PreferenceStore
    const audit = yield* AuditLog
    const checks = yield* InputChecks.make
    const approvalTtl = Duration.decode(options.approvalTtl ?? defaultApprovalTtl)
    /** Whether a service was ever asked for: stopping all of them needs no runtime before that. */
    const used = yield* Ref.make(false)
    const catalogue = yield* SynchronizedRef.make<Catalogue | undefined>(undefined)
    const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.formatIso(DateTime.unsafeMake(millis)))
    const again = AskAgain.make({ approvals, records, audit, approvalTtl })

    /** Read again only after an install: a turn's start reads no table for its tools. */
    const rebuilt = SynchronizedRef.modifyEffect(catalogue, Effect.fnUntraced(function*(cached: Catalogue | undefined) {
      const revision = yield* records.revision
      if (cached !== undefined && cached.revision === revision) return [cached, cached] as const
      const installed = yield* records.installed
      const tools = installed.flatMap((pkg) =>
        pkg.manifest.facets.some((facet) => facet.kind === "service")
          // Job tools run as background jobs (their own routes), never inside a turn's call.
          ? (pkg.manifest.tools ?? []).filter((tool) => tool.execution === undefined).map((tool) => ({ pkg, tool }))
          : []
      )
      const names = toolNames(tools.map(({ pkg, tool }) => ({ packageId: pkg.packageId, tool: tool.name })), sha256)
      const byName = new Map<string, Entry>()
      const offered = tools.map(({ pkg, tool }, i): OfferedTool => {
        const entry: Entry = {
          pkg,
          tool,
          offered: {
            name: names[i]!,
            description: describe(tool),
            inputSchema: tool.inputSchema as Record<string, unknown>,
            packageId: pkg.packageId,
            tool: tool.name,
            risk: tool.risk
          }
        }
        byName.set(entry.offered.name, entry)
        return entry.offered
      })
      const next: Catalogue = { revision, offered, byName }
      return [next, next] as const
    }))
    // Every call looks the catalogue up: while no install changed it, a read of the Ref, not a turn of its lock.
    const current = Effect.flatMap(Effect.zip(SynchronizedRef.get(catalogue), records.revision), ([cached, revision]) =>
      cached !== undefined && cached.revision === revision ? Effect.succeed(cached) : rebuilt)

    /**
     * A preference decoded, read from the store on every call (the store keeps its values in memory and
     * updates them on each write, so a change applies to the next call). The decoding is kept for as long as
     * the store answers the same state object: deny rules are decoded again only after they changed.
     */
    const preference = <A, I>(key: string, schema: Schema.Schema<A, I>, fallback: A) => {
      const decode = Schema.decodeUnknownOption(schema)
      let last: { readonly state: Option.Option<PreferenceState>; readonly value: A } | undefined
      return Effect.map(preferences.get(key), (state) => {
        if (last !== undefined && (last.state === state || (Option.isSome(last.state) && Option.isSome(state) && last.state.value === state.value))) {
          return last.value
        }
        const value = Option.getOrElse(Option.flatMap(state, (s) => decode(s.value)), () => fallback)
        last = { state, value }
        return value
      })
    }
    const machineTurns = preference("execution.machineTurns", MachineTurns, "default")
    const denyRules = preference("execution.denyRules", DenyRules, [])

    const refusal = (
      details: Omit<CallDetails, "summary" | "packageId" | "risk">,
      entry: Entry,
      extra: Record<string, unknown> = {},
      endsTurn = false
    ): CallOutcome => ({
      status: "failed",
      endsTurn,
      output: { error: details.code, message: messages[details.code ?? ""] ?? "The step failed.", ...extra },
      details: {
        packageId: entry.pkg.packageId,
        risk: entry.tool.risk,
        summary: `${bare(entry.pkg.packageId)} · ${entry.tool.name}: ${details.outcome ?? "failed"}`,
        ...details
      }
    })

    /**
     * The call's outcome with its audit row (one per call, written last): appended here, or handed back on the
     * outcome for a caller that writes it in its own unit of work (`auditByCaller`, a widget press).
     */
    const recorded = (
      context: CallContext,
      kind: string,
      entry: Entry,
      detail: Record<string, unknown>,
      outcome: CallOutcome
    ): Effect.Effect<CallOutcome> => {
      const row: AuditEntry = {
        kind,
        conversationId: context.conversationId,
        surface: context.origin,
        // An action the agent took while answering something spoken is not the person speaking.
        channel: context.channel === "voice" ? "voice-agent" : context.channel,
        detail: { taskId: context.taskId, packageId: entry.pkg.packageId, tool: entry.tool.name, ...detail }
      }
      // Object.assign, not `{ ...outcome, audit }`: on this V8 a spread followed by a property makes a new hidden
      // class per object (docs/decisions.md, "Widget presses: a generator function made per call").
      return context.auditByCaller === true
        ? Effect.succeed(Object.assign({}, outcome, { audit: row }))
        : Effect.as(audit.append(row), outcome)
    }

    const ask = Effect.fnUntraced(function*(context: CallContext, entry: Entry, input: unknown, digest: string) {
      const approvalId = yield* makeId("tap")
      const requested = yield* Clock.currentTimeMillis
      const approval: TaskApproval = {
        approvalId,
        taskId: context.taskId,
        conversationId: context.conversationId,
        origin: context.origin,
        packageId: entry.pkg.packageId,
        packageDigest: entry.pkg.digest,
        tool: entry.tool.name,
        risk: entry.tool.risk,
        input,
        operationDigest: digest,
        status: "asked",
        requestedAt: DateTime.formatIso(DateTime.unsafeMake(requested)),
        expiresAt: DateTime.formatIso(DateTime.unsafeMake(requested + Duration.toMillis(approvalTtl))),
        decidedAt: null,
        continuedAs: null
      }
      yield* approvals.insert(approval)
      return yield* recorded(
        context,
        "task-approval-asked",
        entry,
        { approvalId, operationDigest: digest },
        refusal({ outcome: "approval-required", code: "APPROVAL_REQUIRED", approvalId }, entry, { approvalId }, true)
      )
    })

    /**
     * The call sent, the ledger written first for a call with an effect. Such a call reaches the service first
     * and holds it until its answer (one hold, `ServiceRuntime.reach`): one that cannot start has been sent
     * nothing, so no effect is left. A read needs no such step (it writes nothing first): the call itself
     * refuses the same way before sending anything. From the record on, a stop cannot fall between writing the
     * effect and marking it: the call alone is interruptible, and a cancelled call leaves its effect unknown
     * (whether the tool acted by then is not known).
     */
    const sendWithEffect = (entry: Entry, pkg: ServicePackage, newEffect: NewEffect, input: Record<string, unknown>) =>
      Effect.either(runtime.reach(pkg, (service): Effect.Effect<Sent | "not-offered" | undefined> =>
        !service.tools.some((tool) => tool.name === entry.tool.name)
          ? Effect.succeed("not-offered" as const)
          : Effect.uninterruptibleMask((restore) =>
            Effect.gen(function*() {
              const effect = yield* Effect.either(ledger.record(newEffect))
              if (effect._tag === "Left") return undefined
              const effectId = effect.right.effectId
              const exit = yield* Effect.exit(restore(service.call({ tool: entry.tool.name, input })))
              if (Exit.isInterrupted(exit)) yield* Effect.ignore(ledger.unknown(effect.right.effectId, "cancelled"))
              return { effectId, exit }
            }))))

    /** Sends the call; a call with an effect is answered in the ledger, or left unknown. */
    const send = Effect.fnUntraced(function*(context: CallContext, entry: Entry, input: Record<string, unknown>) {
      const pkg = { packageId: entry.pkg.packageId, digest: entry.pkg.digest, cachePath: entry.pkg.cachePath, manifest: entry.pkg.manifest }
      if (!(yield* Ref.get(used))) yield* Ref.set(used, true)
      const newEffect: NewEffect = {
        taskId: context.taskId,
        conversationId: context.conversationId,
        packageId: entry.pkg.packageId,
        packageDigest: entry.pkg.digest,
        tool: entry.tool.name,
        risk: entry.tool.risk,
        origin: context.origin,
        input,
        summary: `${bare(entry.pkg.packageId)} · ${entry.tool.name}`
      }
      let sent: Sent | undefined
      if (entry.tool.risk === "read") {
        sent = { effectId: undefined, exit: yield* Effect.exit(runtime.call(pkg, { tool: entry.tool.name, input })) }
      } else {
        const reached = yield* sendWithEffect(entry, pkg, newEffect, input)
        if (reached._tag === "Left") {
          return refusal({ outcome: "not-sent", code: "SERVICE_UNREACHABLE" }, entry, { reason: reached.left.reason })
        }
        if (reached.right === "not-offered") return refusal({ outcome: "not-sent", code: "RESOURCE_NOT_FOUND" }, entry)
        sent = reached.right
      }
      if (sent === undefined) return refusal({ outcome: "not-sent", code: "LEDGER_UNAVAILABLE" }, entry)
      const { effectId, exit } = sent
      if (Exit.isInterrupted(exit)) return yield* Effect.interrupt
      if (Exit.isSuccess(exit)) {
        const result: ServiceToolResult = exit.value
        const output = modelOutput(result)
        if (effectId !== undefined) {
          yield* ledger.answer(effectId, { isError: result.isError, output }).pipe(
            Effect.catchAll(() => Effect.logWarning("The answer of an effect could not be recorded; it stays sent"))
          )
        }
        return yield* recorded(context, "tool-call", entry, { status: result.isError ? "failed" : "done", effectId }, {
          status: result.isError ? "failed" : "done",
          output,
          details: {
            packageId: entry.pkg.packageId,
            risk: entry.tool.risk,
            summary: `${bare(entry.pkg.packageId)} · ${entry.tool.name}: ${result.isError ? "the tool reported a failure" : "done"}`,
            ...(effectId === undefined ? {} : { effectId })
          }
        })
      }
      const error = yield* Effect.orDie(Effect.flip(Effect.suspend(() => exit)))
      const { code, reason } = failures[error._tag]
      if (effectId === undefined) {
        // Unreachable and not offered are the runtime's refusals before sending.
        const notSent = error._tag === "ServiceUnreachable" || error._tag === "ServiceToolNotOffered"
        return yield* recorded(context, "tool-call", entry, { status: "failed", code }, refusal(notSent ? { outcome: "not-sent", code } : { code }, entry))
      }
      yield* ledger.unknown(effectId, reason).pipe(
        Effect.catchAll(() => Effect.logWarning("An unknown effect could not be recorded; start-up will find it sent"))
      )
      // The task waits as uncertain: it never tries the action again by itself.
      return yield* recorded(context, "tool-call", entry, { status: "unknown", code, effectId }, refusal({ outcome: "unknown-effect", code, effectId }, entry, {
        effectId,
        mayHaveRun: true,
        note: "Whether it took effect is unknown; the person will be asked. Do not try it again."
      }, true))
    })

    const call = Effect.fnUntraced(function*(context: CallContext, name: string, input: unknown) {
      const entry = (yield* current).byName.get(name)
      if (entry === undefined) {
        return {
          status: "failed",
          output: { error: "RESOURCE_NOT_FOUND", message: `No tool ${name} is offered.` },
          details: { packageId: "", risk: "read", summary: `${name}: not offered`, outcome: "not-sent", code: "RESOURCE_NOT_FOUND" }
        } satisfies CallOutcome
      }
      const problem = yield* checks.check(entry.pkg.digest, entry.tool, input)
      if (problem !== undefined) {
        return refusal({ outcome: "not-sent", code: "INVALID_INPUT" }, entry, { problem })
      }
      const step = { origin: context.origin, packageId: entry.pkg.packageId, tool: entry.tool.name, risk: entry.tool.risk }
      const verdict = policy(step, { machineTurns: yield* machineTurns, denyRules: yield* denyRules, granted: false })
      switch (verdict._tag) {
        case "Deny":
          return yield* recorded(context, "tool-denied", entry, { rule: verdict.rule }, refusal({ outcome: "denied", code: "POLICY_REFUSED" }, entry))
        case "Ask": {
          // Only a step that would ask names its operation and looks for a grant of exactly that one.
          const digest = operationDigest(entry.pkg.packageId, entry.tool.name, input, entry.pkg.digest)
          const granted = yield* approvals.grantedFor(context.conversationId, digest)
          if (Option.isNone(granted)) return yield* ask(context, entry, input, digest)
          // Approving one step approves nothing else: the grant is spent by this call.
          const spent = yield* approvals.transition(granted.value.approvalId, ["granted"], "used", yield* now)
          if (!spent) return yield* ask(context, entry, input, digest)
          return yield* send(context, entry, input as Record<string, unknown>)
        }
        case "Run":
          return yield* send(context, entry, input as Record<string, unknown>)
      }
    })

    const decide: PackageTools["Type"]["decide"] = Effect.fnUntraced(function*(taskId, approvalId, decision, digest) {
      const found = yield* approvals.get(approvalId)
      if (Option.isNone(found) || found.value.taskId !== taskId) return yield* new ApprovalNotFound({ approvalId })
      const approval = found.value
      if (digest !== approval.operationDigest) return yield* new ApprovalForged({ approvalId })
      const at = yield* now
      if (approval.status === "asked" && at >= approval.expiresAt) {
        yield* approvals.transition(approvalId, ["asked"], "expired", at)
        return yield* new ApprovalExpired({ approvalId })
      }
      const moved = yield* approvals.transition(approvalId, ["asked"], decision, at)
      if (!moved) {
        const now = Option.getOrElse(yield* approvals.get(approvalId), () => approval)
        return yield* now.status === "expired"
          ? new ApprovalExpired({ approvalId })
          : new ApprovalAlreadyDecided({ approvalId, status: now.status })
      }
      yield* audit.append({
        kind: "task-approval-decided",
        conversationId: approval.conversationId,
        surface: "person",
        detail: { approvalId, taskId, decision, origin: approval.origin, tool: approval.tool, packageId: approval.packageId }
      })
      return { ...approval, status: decision, decidedAt: at }
    })

    return PackageTools.of({
      askAgain: again.askAgain,
      offered: Effect.map(current, (c) => c.offered),
      lookup: (name) => Effect.map(current, (c) => Option.map(Option.fromNullable(c.byName.get(name)), (e) => e.offered)),
      call,
      decide,
      continued: approvals.continued,
      stopAll: Effect.flatMap(Ref.get(used), (was) => (was ? runtime.stopAll : Effect.succeed(0)))
    })
  })

export const layer = (options: Options = {}) =>
  Layer.effect(PackageTools, make(options))
