/** Background jobs of package capabilities (`execution: {kind: job, version: 1}`). */
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { ArtifactRef } from "./Artifact.js"

export const JobStatus = Schema.Literal("queued", "running", "waiting", "completed", "failed", "cancelled")
export type JobStatus = typeof JobStatus.Type

/** A job reference handed to a widget: an opaque id starting with `job_`. */
export const JobRef = Schema.String.pipe(
  Schema.pattern(/^job_[A-Za-z0-9_-]{1,120}$/, { message: () => "must be a job reference (job_…)" })
).annotations({ identifier: "JobRef" })

/** Only what the service reported (MCP progress): a count, an optional total and message. */
export const JobProgress = Schema.Struct({
  progress: Schema.Number,
  total: Schema.optional(Schema.Number),
  message: Schema.optional(Schema.String)
})

/** A failed job's error: the service quoted inside a fixed sentence (quote cut at 400 characters). */
export const JobError = Schema.Struct({ code: Schema.String, message: Schema.String })

export const maxJobList = 20
export const maxJobErrorQuote = 400

export const Job = Schema.Struct({
  jobId: JobRef,
  status: JobStatus,
  progress: Schema.optional(JobProgress),
  resultRefs: Schema.Array(ArtifactRef),
  output: Schema.optional(Schema.Unknown),
  error: Schema.optional(JobError),
  createdAt: DateTimeString,
  startedAt: Schema.optional(DateTimeString),
  endedAt: Schema.optional(DateTimeString)
}).annotations({ identifier: "Job" })
export type Job = typeof Job.Type

export const JobList = Schema.Struct({ jobs: Schema.Array(Job).pipe(Schema.maxItems(maxJobList)) }).annotations({
  identifier: "JobList"
})

export const JobEnvelope = Schema.Struct({ job: Job }).annotations({ identifier: "JobEnvelope" })

/** 202 of a cancel: the job may already have completed its effect. */
export const JobCancelAccepted = Schema.Struct({ accepted: Schema.Boolean, jobId: Schema.String }).annotations({
  identifier: "JobCancelAccepted"
})
