/**
 * The rules of machine-surface widget file writes (spec, "Machine-surface widget file writes"; docs/decisions.md,
 * "Machine-surface widget file writes"), pure and table-tested: who the asker is, what one approval card covers,
 * the risk of a write, what the person's policy answers and what a write right covers.
 */
import canonicalize from "canonicalize"
import { createHash } from "node:crypto"
import { Duration, Schema } from "effect"
import type { RiskClass } from "../../schema/node/Manifest.js"
import type { DenyRule, MachineTurns } from "../../schema/node/Preferences.js"
import type { Caller, Surface } from "../../schema/node/Security.js"
import { askingOrigins, decide, type Verdict } from "./ExecutionPolicy.js"

/** The spec's machine write right: 15 minutes per file. */
export const writeRight = Duration.minutes(15)
/** More than this many waiting cards from one surface in one conversation: 429 APPROVALS_PENDING. */
export const maxWaitingCards = 8
/** A card nobody decided within this expires (as a task approval does). */
export const cardLifetime = Duration.hours(1)

/**
 * Who asks. Over the relay only the asking connection holds what it was granted, so the connection is part of
 * the asker; over MCP and the command-line api any client of that surface holds it, so the surface alone is.
 */
export const askerOf = (caller: Caller): string =>
  caller.surface === "relay" ? `relay:${caller.connection ?? ""}` : caller.surface

/**
 * What one card covers: one file, never one chunk. `write` is write access to an existing working file (its
 * chunks and its finalize); `create` a new file of the widget with its type and name; `attach` and `discard` one
 * file each.
 */
export const FileOperation = Schema.Literal("create", "write", "attach", "discard")
export type FileOperation = typeof FileOperation.Type

/** The card's `input`: what the person is shown. Never bytes, never an offset (a chunk is not a card). */
export const CardInput = Schema.Struct({
  kind: Schema.Literal("widget-file-write"),
  version: Schema.Literal(1),
  operation: FileOperation,
  instanceId: Schema.String,
  artifactId: Schema.NullOr(Schema.String),
  mimeType: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  asker: Schema.String
})
export type CardInput = typeof CardInput.Type

/** The tool name a file card carries in the task approval (`artifacts.create`, …). */
export const cardTool = (operation: FileOperation) => `artifacts.${operation}`

/** Whether a task approval is a file-write card (its input says so, not only its tool name). */
export const isCard = (approval: { readonly tool: string; readonly input: unknown }): boolean =>
  approval.tool.startsWith("artifacts.") && Schema.is(CardInput)(approval.input)

/** Asking again for the same thing finds the waiting card by this digest. */
export const cardDigest = (conversationId: string, card: CardInput): string =>
  `sha256:${createHash("sha256").update(canonicalize(["widget-file-write", conversationId, card]) ?? "").digest("hex")}`

/**
 * A write is local-write; discarding is destructive unless the file is an unfinished one this same asker
 * started.
 */
export const riskOf = (
  operation: FileOperation,
  file: { readonly state: "unfinished" | "finalized"; readonly startedBy: string | null } | null,
  asker: string
): RiskClass =>
  operation !== "discard" || (file !== null && file.state === "unfinished" && file.startedBy === asker)
    ? "local-write"
    : "destructive"

export interface WriteStep {
  readonly origin: Surface
  readonly packageId: string
  readonly operation: FileOperation
  readonly risk: RiskClass
}

/**
 * The person's policy over a machine file write. Deny rules win (matched on `artifacts.<operation>`, the widget's
 * package and the risk); a write right or a grant for exactly this runs it; under `execution.machineTurns = ask`
 * every write from mcp, relay or cli-api asks, a local write included: another program writing into a widget
 * the person placed is what "requests from other programs" covers, and the spec's write right exists only if a
 * create can ask.
 */
export const verdictOf = (
  step: WriteStep,
  input: { readonly machineTurns: MachineTurns; readonly denyRules: ReadonlyArray<DenyRule>; readonly granted: boolean }
): Verdict => {
  const base = decide({ origin: step.origin, packageId: step.packageId, tool: cardTool(step.operation), risk: step.risk }, input)
  if (base._tag !== "Run" || input.granted) return base
  return input.machineTurns === "ask" && askingOrigins.includes(step.origin) ? { _tag: "Ask" } : base
}

/** A write right held on one file: by whom and until when (epoch ms). */
export interface Right {
  readonly asker: string
  readonly until: number
}

/** What a held right covers: the file's chunks and finalize, and discarding it while it is the holder's own local write. */
export const rightCovers = (right: Right | undefined, asker: string, now: number, operation: FileOperation, risk: RiskClass) =>
  right !== undefined && right.asker === asker && now < right.until &&
  (operation === "write" || (operation === "discard" && risk === "local-write"))
