/** What the job routes refuse with; src/node/http/Errors.ts gives each its code and status. */
import { Schema } from "effect"

/** No such job for this asker: also a job of another widget, conversation, package version or capability. */
export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", { jobId: Schema.String }) {}

/** Cancel of a job that already ended; the job stays readable. */
export class JobNotRunning extends Schema.TaggedError<JobNotRunning>()("JobNotRunning", {
  jobId: Schema.String,
  status: Schema.String
}) {}

/** The node cannot run jobs now (it is shutting down, or the job could not be recorded). */
export class JobUnavailable extends Schema.TaggedError<JobUnavailable>()("JobUnavailable", {
  reason: Schema.Literal("shutting-down", "not-installed", "not-a-job", "store-unavailable")
}) {}



/**
 * No such widget in the named conversation, on a job or export route: INSTANCE_UNKNOWN. (The press route's own
 * `InstanceUnknown` lives with the widget errors; this one keeps the job routes apart from them until merged.)
 */
export class WidgetNotHere extends Schema.TaggedError<WidgetNotHere>()("WidgetNotHere", { instanceId: Schema.String }) {}

export type JobError = JobNotFound | JobNotRunning | JobUnavailable | WidgetNotHere
