/**
 * Widget routes (prefix `/conversations/{id}/widgets/{instanceId}`): table
 * export, bound action presses and the jobs a widget's own buttons started.
 * The widget's file routes are in Artifact.ts.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { refusals } from "./Errors.js"
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

/** One step of a workflow report (in successes and as a refusal member). */
export const WorkflowStep = Schema.Struct({
  step: Schema.String,
  status: Schema.Literal("done", "skipped", "failed", "uncertain", "not-run"),
  code: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
}).annotations({ identifier: "WorkflowStep" })

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
export const ActionRefusalMembers = Schema.Struct({
  outcome: Schema.optional(Schema.Literal("uncertain", "partial", "refused")),
  mayHaveRun: Schema.optional(Schema.Boolean),
  recorded: Schema.optional(Schema.Boolean),
  readOnly: Schema.optional(Schema.Boolean),
  taskId: Schema.optional(Schema.String),
  retryAfterMs: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  limit: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  workflow: Schema.optional(Schema.Array(WorkflowStep))
})
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
        "SERVICE_TOOL_FAILED", "LEDGER_UNAVAILABLE", "SERVICE_TIMED_OUT", "SERVICE_UNREACHABLE"
      ))
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
