/**
 * Widget routes (prefix `/conversations/{id}/widgets/{instanceId}`): table
 * export, bound action presses and the jobs a widget's own buttons started.
 * The widget's file routes are in Artifact.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { pressRefusalMembers, refusals, WorkflowStep } from "./Errors.js"
import { LookupId, WidgetPath, widgetPrefix } from "./Instance.js"
import { JobCancelAccepted, JobEnvelope, JobList, JobRef } from "./Job.js"
import { Authenticated, PersonOnly } from "./Security.js"

// ---------------------------------------------------------------------------
// Table export

export const ColumnName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

export const ExportSort = Schema.Struct({ column: ColumnName, direction: Schema.Literal("asc", "desc") })

export const FilterOperator = Schema.Literal("eq", "neq", "contains", "lt", "lte", "gt", "gte")

export const ExportFilter = Schema.Struct({
  column: ColumnName,
  op: FilterOperator,
  value: Schema.Union(Schema.String.pipe(Schema.maxLength(1000)), Schema.Number, Schema.Boolean, Schema.Null)
})

/**
 * Chooses rows of the table's own dataset (sort, query, filters over every
 * column shown) and which columns the file carries. A request never carries rows.
 */
export const ExportRequest = Schema.Struct({
  sort: Schema.optional(Schema.Array(ExportSort).pipe(Schema.maxItems(8))),
  query: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  filters: Schema.optional(Schema.Array(ExportFilter).pipe(Schema.maxItems(32))),
  columns: Schema.optional(Schema.Array(ColumnName).pipe(Schema.maxItems(200)))
}).annotations({ identifier: "ExportRequest" })
export type ExportRequest = typeof ExportRequest.Type

/** The CSV download; the handler names the file in Content-Disposition (filename and filename*). */
export const Csv = HttpApiSchema.Text({ contentType: "text/csv" })

// ---------------------------------------------------------------------------
// Action presses

/** The only variant: a host-held player's playback state (canvas.video@1, canvas.audio@1). */
export const viewStateVariant = "view-state"
/** Invocation ids with this prefix are reserved (400 INVALID_SCHEMA, checked by the handler). */
export const reservedInvocationPrefix = "view-state:"

/**
 * A press of a bound action. `variant` and `sequence` stay loose here: a
 * variant other than view-state, a sequence without the variant and the
 * reverse answer 400 INVALID_SCHEMA from the handler, not the decoding failure.
 */
export const ActionPress = Schema.Struct({
  actionBindingId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  expectedRevision: Schema.Int.pipe(Schema.nonNegative()),
  expectedBindingDigest: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  input: Schema.Unknown,
  invocationId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  variant: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  sequence: Schema.optional(Schema.Int.pipe(Schema.positive()))
}).annotations({ identifier: "ActionPress" })
export type ActionPress = typeof ActionPress.Type

export { WorkflowStep } from "./Errors.js"

/** 200 of a press: the action ran. A job capability answers with its job reference. */
export const ActionDone = Schema.Struct({
  outcome: Schema.Literal("done"),
  invocationId: Schema.String,
  instanceId: Schema.String,
  revision: Schema.Int,
  result: Schema.optional(Schema.Unknown),
  job: Schema.optional(JobRef),
  taskId: Schema.optional(Schema.String),
  workflow: Schema.optional(Schema.Array(WorkflowStep))
}).annotations({ identifier: "ActionDone" })

/** 200 of a `view-state` write; it never moves the instance revision and writes no timeline. */
export const ViewStateWritten = Schema.Struct({
  variant: Schema.Literal(viewStateVariant),
  duplicate: Schema.Boolean,
  stale: Schema.optional(Schema.Literal(true)),
  instanceId: Schema.String,
  revision: Schema.Int,
  stateRevision: Schema.Int,
  state: Schema.Unknown
}).annotations({ identifier: "ViewStateWritten" })

/** 202: policy asks first; the approval card waits. */
export const ActionApprovalRequired = Schema.Struct({
  outcome: Schema.Literal("approval-required"),
  invocationId: Schema.String,
  approvalRequired: Schema.Struct({ approvalId: Schema.String }),
  taskId: Schema.optional(Schema.String)
}).annotations({ identifier: "ActionApprovalRequired" })

/** 202: the action continues in the background. */
export const ActionInBackground = Schema.Struct({
  outcome: Schema.Literal("background"),
  invocationId: Schema.String,
  taskId: Schema.String
}).annotations({ identifier: "ActionInBackground" })

/** The members a press refusal carries beside `code` and `message`, where they apply. */
export const ActionRefusalMembers = Schema.Struct(pressRefusalMembers)
export type ActionRefusalMembers = typeof ActionRefusalMembers.Type

/**
 * Input of an action the assistant asks a widget to perform (no HTTP route:
 * the bridge carries it): shown whole on the approval card, at most 1,200
 * characters as JSON.
 */
export const maxOfferedActionInputChars = 1200
export const OfferedActionInput = Schema.Unknown.pipe(
  Schema.filter((input) => {
    const text = JSON.stringify(input)
    return text === undefined || text.length <= maxOfferedActionInputChars
      ? true
      : `an action input is at most ${maxOfferedActionInputChars} characters`
  })
)

// ---------------------------------------------------------------------------
// The instance, its frame and its semantic description

/** A binding as the app presses it: `digest` is what `expectedBindingDigest` names. */
export const BindingView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("tool", "agent", "view-state"),
  digest: Schema.String,
  perMinute: Schema.Int
}).annotations({ identifier: "WidgetBinding" })

/** A host-held player's view state as the node holds it. */
export const ViewStateView = Schema.Struct({
  sequence: Schema.Int,
  stateRevision: Schema.Int,
  state: Schema.Unknown
}).annotations({ identifier: "WidgetViewState" })

/**
 * GET of an instance: what the app needs to draw it and press its buttons (docs/decisions.md, "Widget
 * instances"). The frame's HTML is at `frame`, relative to the instance's route.
 */
export const WidgetInstanceView = Schema.Struct({
  instanceId: Schema.String,
  conversationId: Schema.String,
  packageId: Schema.String,
  version: Schema.String,
  contentDigest: Schema.String,
  widgetId: Schema.String,
  /** "package" for a package's isolated-ui widget, "host" for a host-held player the app draws itself. */
  kind: Schema.Literal("package", "host"),
  title: Schema.String,
  appearanceMode: Schema.Literal("adaptive", "fixed"),
  props: Schema.Unknown,
  revision: Schema.Int,
  bindings: Schema.Array(BindingView),
  offeredActions: Schema.Array(Schema.String),
  taskId: Schema.NullOr(Schema.String),
  placedAt: Schema.String,
  viewState: Schema.NullOr(ViewStateView)
}).annotations({ identifier: "WidgetInstance" })
export type WidgetInstanceView = typeof WidgetInstanceView.Type

/** The widget's entry HTML from the package cache, served with a sandboxing Content-Security-Policy. */
export const Html = HttpApiSchema.Text({ contentType: "text/html" })

/** The semantic description a widget publishes (`api.semantic.publish(summary, selectedIds, values?)`). */
export const maxSemanticSummaryChars = 4000
export const SemanticPublish = Schema.Struct({
  /** The widget's own count of its publishes, growing: the node keeps the newest it received. */
  publishRevision: Schema.Int.pipe(Schema.positive()),
  summary: Schema.String.pipe(Schema.maxLength(maxSemanticSummaryChars)),
  selectedIds: Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(200)),
  values: Schema.optional(Schema.Record({ key: Schema.String.pipe(Schema.maxLength(200)), value: Schema.Unknown }))
}).annotations({ identifier: "SemanticPublish" })
export type SemanticPublish = typeof SemanticPublish.Type

/** What the node holds of the widget's description: the newest publish it received, or none yet. */
export const SemanticHeld = Schema.Struct({
  instanceId: Schema.String,
  /** 0 when nothing was published yet. */
  publishRevision: Schema.Int,
  /** Whether this publish was kept (false: the node already held a newer one, which is answered). */
  accepted: Schema.optional(Schema.Boolean),
  summary: Schema.NullOr(Schema.String),
  selectedIds: Schema.Array(Schema.String),
  values: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  publishedAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "SemanticHeld" })
export type SemanticHeld = typeof SemanticHeld.Type

// ---------------------------------------------------------------------------
// Jobs of a widget

export const WidgetJobPath = Schema.Struct({ ...WidgetPath.fields, jobId: LookupId })

export class WidgetsGroup extends HttpApiGroup.make("widgets")
  .add(
    HttpApiEndpoint.post("export", `${widgetPrefix}/export`)
      .setPath(WidgetPath)
      .setPayload(ExportRequest)
      .addSuccess(Csv)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "NOT_IMPLEMENTED"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("press", `${widgetPrefix}/actions`)
      .setPath(WidgetPath)
      .setPayload(ActionPress)
      .addSuccess(Schema.Union(ActionDone, ViewStateWritten))
      .addSuccess(Schema.Union(ActionApprovalRequired, ActionInBackground), { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "INVALID_SCHEMA", "UNSUPPORTED_ACTION", "POLICY_REFUSED", "INSTANCE_UNKNOWN",
        "ACTION_INTERRUPTED", "NOT_INSTALLED", "SERVICE_CANCELLED", "RATE_LIMITED", "NOT_IMPLEMENTED",
        "SERVICE_TOOL_FAILED", "LEDGER_UNAVAILABLE", "SERVICE_TIMED_OUT", "SERVICE_UNREACHABLE", "JOB_UNAVAILABLE"
      ))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("instance", widgetPrefix)
      .setPath(WidgetPath)
      .addSuccess(WidgetInstanceView)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "NOT_INSTALLED"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("frame", `${widgetPrefix}/frame`)
      .setPath(WidgetPath)
      .addSuccess(Html)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "NOT_INSTALLED", "UNSUPPORTED_ACTION"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.put("publishSemantic", `${widgetPrefix}/semantic`)
      .setPath(WidgetPath)
      .setPayload(SemanticPublish)
      .addSuccess(SemanticHeld)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("semantic", `${widgetPrefix}/semantic`)
      .setPath(WidgetPath)
      .addSuccess(SemanticHeld)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("jobs", `${widgetPrefix}/jobs`)
      .setPath(WidgetPath)
      .addSuccess(JobList)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "NOT_IMPLEMENTED", "JOB_UNAVAILABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.get("job", `${widgetPrefix}/jobs/:jobId`)
      .setPath(WidgetJobPath)
      .addSuccess(JobEnvelope)
      .addError(refusals("INVALID_INPUT", "INSTANCE_UNKNOWN", "JOB_NOT_FOUND", "NOT_IMPLEMENTED", "JOB_UNAVAILABLE"))
      .middleware(Authenticated)
  )
  .add(
    HttpApiEndpoint.post("cancelJob", `${widgetPrefix}/jobs/:jobId`)
      .setPath(WidgetJobPath)
      .addSuccess(JobCancelAccepted, { status: 202 })
      .addError(refusals(
        "INVALID_INPUT", "INSTANCE_UNKNOWN", "JOB_NOT_FOUND", "JOB_NOT_RUNNING", "NOT_IMPLEMENTED", "JOB_UNAVAILABLE"
      ))
      .middleware(Authenticated)
  )
{}
