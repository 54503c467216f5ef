/**
 * The execution policy of a package tool call inside a turn (spec, "Authentication"; docs/decisions.md,
 * "Execution policy"): deny rules win over everything; with `execution.machineTurns = ask` a risky step of a
 * turn from mcp, relay or cli-api asks the person first; an approval covers exactly one operation. Pure.
 */
import type { RiskClass } from "../../schema/node/Manifest.js"
import type { DenyRule, MachineTurns } from "../../schema/node/Preferences.js"
import type { Surface } from "../../schema/node/Security.js"

/** The risk classes the spec calls risky. `read` and `local-write` never ask. */
export const riskyClasses: ReadonlyArray<RiskClass> = [
  "external-write",
  "destructive",
  "financial",
  "communication",
  "media-capture"
]

/** The origins whose risky steps ask under `machineTurns = ask`. */
export const askingOrigins: ReadonlyArray<Surface> = ["mcp", "relay", "cli-api"]

export interface Step {
  readonly origin: Surface
  readonly packageId: string
  readonly tool: string
  readonly risk: RiskClass
}

export interface PolicyInput {
  readonly machineTurns: MachineTurns
  readonly denyRules: ReadonlyArray<DenyRule>
  /** Whether the person granted an approval for exactly this operation (its digest) that is not used yet. */
  readonly granted: boolean
}

export type Verdict =
  | { readonly _tag: "Run" }
  | { readonly _tag: "Ask" }
  | { readonly _tag: "Deny"; readonly rule: number }

/** Every field a rule gives must match; a rule with only `package` prohibits the whole package. */
export const matches = (rule: DenyRule, step: Step): boolean =>
  (rule.package === undefined || rule.package === step.packageId) &&
  (rule.tool === undefined || rule.tool === step.tool) &&
  (rule.risk === undefined || rule.risk === step.risk) &&
  (rule.origins === undefined || rule.origins.includes(step.origin))

export const decide = (step: Step, input: PolicyInput): Verdict => {
  const rule = input.denyRules.findIndex((r) => matches(r, step))
  if (rule >= 0) return { _tag: "Deny", rule }
  if (input.granted) return { _tag: "Run" }
  const asks = input.machineTurns === "ask" && askingOrigins.includes(step.origin) && riskyClasses.includes(step.risk)
  return asks ? { _tag: "Ask" } : { _tag: "Run" }
}
