/**
 * The pure rules of offered actions (spec, "Actions the assistant asks a widget to perform"; docs/decisions.md,
 * "Offered actions and job approvals"): the input's size, the card's digest, the execution policy of a local write,
 * the waiting-card bound. Table-tested in test/node/widgets/OfferedActionRules.test.ts.
 */
import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import type { DenyRule, MachineTurns } from "../../schema/node/Preferences.js"
import type { Surface } from "../../schema/node/Security.js"
import { maxOfferedActionInputChars } from "../../schema/node/Widget.js"
import { askingOrigins, matches, type Verdict } from "./ExecutionPolicy.js"

export const performToolName = "perform_widget_action"

/** Waiting action cards per conversation (spec, Limits); the next one is refused 429 APPROVALS_PENDING. */
export const maxWaitingActionCards = 8

/** What the widget may say of a refusal, and how much of a result the node keeps. */
export const maxWhyChars = 400
export const maxResultChars = 20_000

/** The input's size as the card shows it: its JSON text (`null` when there is none). */
export const inputChars = (input: unknown): number => (JSON.stringify(input ?? null) ?? "null").length

export const inputTooLong = (input: unknown): boolean => inputChars(input) > maxOfferedActionInputChars

/** The step's tool as deny rules and the ledger name it: `<widget>.<action>`, as a press's timeline block does. */
export const stepTool = (widgetId: string, action: string) => `${widgetId}.${action}`

/**
 * What the person approves, as one digest: this action of this placed widget, with exactly this input, from
 * the package content it was placed from. The same request while its card waits has the same digest.
 */
export const offeredDigest = (instanceId: string, contentDigest: string, action: string, input: unknown) =>
  `sha256:${
    createHash("sha256").update(canonicalize(["widget-action", instanceId, action, input ?? null, contentDigest]) ?? "")
      .digest("hex")
  }`

/**
 * Performing an offered action is a local write. A deny rule matching it (package, tool `<widget>.<action>`,
 * risk `local-write`, origin) refuses it; with `execution.machineTurns = ask`, one asked for by a turn of another
 * program (mcp, relay, cli-api) asks the person first, as the machine surfaces' widget file writes do; otherwise
 * it runs.
 */
export const offeredVerdict = (
  step: { readonly origin: Surface; readonly packageId: string; readonly tool: string },
  settings: { readonly machineTurns: MachineTurns; readonly denyRules: ReadonlyArray<DenyRule> }
): Verdict => {
  const full = { ...step, risk: "local-write" as const }
  const rule = settings.denyRules.findIndex((r) => matches(r, full))
  if (rule >= 0) return { _tag: "Deny", rule }
  return settings.machineTurns === "ask" && askingOrigins.includes(step.origin) ? { _tag: "Ask" } : { _tag: "Run" }
}

/** What the widget answered, as the app reports it. */
export type WidgetOutcome = "done" | "refused" | "error"

/** The status a request reaches by the widget's answer: an error leaves the effect unknown (never retried). */
export const settledStatus = (outcome: WidgetOutcome): "done" | "refused" | "unknown" =>
  outcome === "error" ? "unknown" : outcome
