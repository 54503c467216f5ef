/**
 * What a widget route or press can be refused with (spec, "Widget action press"). None knows an HTTP status:
 * src/node/http/Errors.ts maps each to its wire code. Messages never quote a press's input.
 */
import { Schema } from "effect"

/** No such widget in the named conversation (another conversation's instance is not here either). */
export class InstanceUnknown extends Schema.TaggedError<InstanceUnknown>()("InstanceUnknown", {
  instanceId: Schema.String
}) {}

/** The package the widget was placed from is not installed as it was (the listing or the install changed). */
export class WidgetNotInstalled extends Schema.TaggedError<WidgetNotInstalled>()("WidgetNotInstalled", {
  packageId: Schema.String
}) {}

/** A host-held player has no frame: the app draws it itself. */
export class NoFrame extends Schema.TaggedError<NoFrame>()("NoFrame", {
  instanceId: Schema.String
}) {}

/** Press rule 10: a reserved invocation id, a sequence without the variant, the variant without one, another variant. */
export class PressSchemaInvalid extends Schema.TaggedError<PressSchemaInvalid>()("PressSchemaInvalid", {
  reason: Schema.Literal("reserved-invocation-id", "sequence-without-variant", "variant-without-sequence", "unknown-variant")
}) {}

/** The binding is not one of this widget's, or the variant does not fit it. */
export class PressUnsupported extends Schema.TaggedError<PressUnsupported>()("PressUnsupported", {
  actionBindingId: Schema.String,
  reason: Schema.Literal("unknown-binding", "variant-on-other-binding", "player-needs-variant")
}) {}

/** The press does not fit what the instance holds now (revision, digest) or its input does not fit. */
export class PressInputInvalid extends Schema.TaggedError<PressInputInvalid>()("PressInputInvalid", {
  field: Schema.String,
  reason: Schema.Literal("stale-revision", "binding-digest-mismatch", "input", "clock-bound", "semantic-not-held"),
  problem: Schema.optional(Schema.String)
}) {}

/** Over the binding's presses a minute. */
export class PressRateLimited extends Schema.TaggedError<PressRateLimited>()("PressRateLimited", {
  actionBindingId: Schema.String,
  limit: Schema.Int,
  retryAfterMs: Schema.Int
}) {}

/** The press with this invocation id was cut off by a restart: whether it ran is not known here. */
export class PressInterrupted extends Schema.TaggedError<PressInterrupted>()("PressInterrupted", {
  invocationId: Schema.String
}) {}

export const WorkflowStep = Schema.Struct({
  step: Schema.String,
  status: Schema.Literal("done", "skipped", "failed", "uncertain", "not-run"),
  code: Schema.optional(Schema.String)
})

/** What a press's call came to when it did not simply run: stored with the invocation and answered again as is. */
export const PressFailure = Schema.Literal(
  "policy-refused",
  "ledger-unavailable",
  "service-timed-out",
  "service-cancelled",
  "service-unreachable",
  "service-tool-failed",
  "tool-not-offered",
  "input-refused",
  "job-unavailable"
)

export class PressFailed extends Schema.TaggedError<PressFailed>()("PressFailed", {
  failure: PressFailure,
  outcome: Schema.Literal("uncertain", "partial", "refused"),
  mayHaveRun: Schema.Boolean,
  recorded: Schema.Boolean,
  readOnly: Schema.optional(Schema.Boolean),
  taskId: Schema.optional(Schema.String),
  effectId: Schema.optional(Schema.String),
  workflow: Schema.Array(WorkflowStep)
}) {}

export type WidgetError =
  | InstanceUnknown
  | WidgetNotInstalled
  | NoFrame
  | PressSchemaInvalid
  | PressUnsupported
  | PressInputInvalid
  | PressRateLimited
  | PressInterrupted
  | PressFailed
