/**
 * The effect ledger: every tool call that can change something is recorded (durably) before it is sent, its
 * answer after; a call that went out without a trustworthy answer becomes an unknown effect the person settles
 * with POST /effects/{effectId}/reconcile. The task never retries the action by itself.
 */
import { Context, type Effect, type Option } from "effect"
import { RiskClass } from "../../schema/node/Manifest.js"
import type { Surface } from "../../schema/node/Security.js"
import type { EffectNotFound, EffectNotUnknown, LedgerUnavailable } from "./LedgerErrors.js"

export const Risk = RiskClass
export type Risk = RiskClass

/** A call about to be sent. */
export interface NewEffect {
  readonly taskId: string
  readonly conversationId: string | null
  readonly packageId: string
  readonly packageDigest: string
  readonly tool: string
  readonly risk: Risk
  readonly origin: Surface
  /** Stored as JSON: inputs never carry secrets (credentials live in the broker). */
  readonly input: unknown
  /** A short human line, e.g. `notes-service · add_note`. */
  readonly summary: string
}

export type EffectStatus = "sent" | "answered" | "unknown" | "confirmed" | "did-not-happen"

/** Why an effect is unknown: the call went out and no trustworthy answer came back. */
export type UnknownReason = "timed-out" | "cancelled" | "unreachable" | "tool-failed" | "interrupted-by-restart"

export type ReconcileOutcome = "confirmed" | "failed"
export type ReconcileSource = "click" | "chat" | "voice"

/** A task settled by a reconcile answer (docs/decisions.md, "Effect ledger"). */
export type SettledTaskStatus = "succeeded" | "settled-unchecked" | "failed"

export interface Reconciliation {
  readonly outcome: ReconcileOutcome
  /** As the client sent it; proves nothing. */
  readonly source: ReconcileSource | null
  readonly by: Surface
  readonly at: string
  readonly taskStatus: SettledTaskStatus
}

export interface EffectRecord extends NewEffect {
  readonly effectId: string
  readonly status: EffectStatus
  readonly mayHaveRun: boolean
  readonly reason: UnknownReason | null
  /** The recorded answer when answered: `{isError, output}`. */
  readonly answer: unknown | null
  /** Whether the run checked the call's result afterwards (a read that confirmed it); see `markChecked`. */
  readonly checked: boolean
  readonly recordedAt: string
  readonly answeredAt: string | null
  readonly reconciled: Reconciliation | null
}

/**
 * How a reconcile answer settles the task: it succeeded only when the person confirms the effect and the run
 * had also checked its result; a confirmation without that check settles it as `settled-unchecked`; an
 * effect that did not happen fails the task.
 */
export const settledTaskStatus = (outcome: ReconcileOutcome, checked: boolean): SettledTaskStatus =>
  outcome === "failed" ? "failed" : checked ? "succeeded" : "settled-unchecked"

/** `did-not-happen` for a failed answer, `confirmed` otherwise. */
export const reconciledStatus = (outcome: ReconcileOutcome): "confirmed" | "did-not-happen" =>
  outcome === "confirmed" ? "confirmed" : "did-not-happen"

export class Ledger extends Context.Tag("clark/node/Ledger")<Ledger, {
  /** Committed (synchronously, to disk) before it returns, with status `sent`; only then may the call be sent. */
  readonly record: (effect: NewEffect) => Effect.Effect<EffectRecord, LedgerUnavailable>
  /**
   * The call's answer (a tool result, `isError` included). Only a `sent` effect takes it: a late answer to an
   * effect already unknown is discarded (the person's answer is the one that counts).
   */
  readonly answer: (
    effectId: string,
    answer: { readonly isError: boolean; readonly output: unknown }
  ) => Effect.Effect<void, LedgerUnavailable>
  /**
   * The call went out without a trustworthy answer: `sent` → `unknown` with `mayHaveRun: true`, and the inbox
   * gets a notice asking about it. An effect no longer `sent` is answered as it stands. An id that was never
   * recorded is a defect of the caller.
   */
  readonly unknown: (effectId: string, reason: UnknownReason) => Effect.Effect<EffectRecord, LedgerUnavailable>
  /** The run checked the call's result: a later confirmation settles the task as succeeded. */
  readonly markChecked: (effectId: string) => Effect.Effect<void, LedgerUnavailable>
  /** Answers `none` when the ledger cannot be read (logged). */
  readonly get: (effectId: string) => Effect.Effect<Option.Option<EffectRecord>>
  /** The unknown effects, oldest first, for the inbox's waiting items; empty when the ledger cannot be read. */
  readonly unknownEffects: Effect.Effect<ReadonlyArray<EffectRecord>>
  /** The person's answer, once: concurrent answers to one effect have exactly one winner. */
  readonly reconcile: (
    effectId: string,
    answer: { readonly outcome: ReconcileOutcome; readonly source?: ReconcileSource | undefined; readonly by: Surface }
  ) => Effect.Effect<EffectRecord, EffectNotFound | EffectNotUnknown | LedgerUnavailable>
}>() {}
