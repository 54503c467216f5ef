/**
 * Package submissions (scope packages:submit): asking the marketplace to index a registry package version.
 * The spec gives the result's shape; the request, the list and the curator's re-index are decided in
 * docs/decisions.md ("Submissions and the indexer").
 */
import { Schema } from "effect"
import { DateTimeString, PathSegment } from "../common/Text.js"
import { PackageName, Version } from "./Package.js"

export const SubmissionStatus = Schema.Literal("queued", "indexing", "indexed", "failed")
export type SubmissionStatus = typeof SubmissionStatus.Type

const SubmissionIdText = Schema.String.pipe(
  Schema.pattern(/^sub_[A-Za-z0-9_-]{1,64}$/, { message: () => "must be a submission id (sub_…)" })
)
/** Submissions and indexing jobs both have text ids: the brands keep one from standing for the other. */
export const SubmissionId = SubmissionIdText.pipe(Schema.brand("SubmissionId"))
export type SubmissionId = typeof SubmissionId.Type
export const IndexJobId = Schema.String.pipe(Schema.pattern(/^ixj_/), Schema.brand("IndexJobId"))
export type IndexJobId = typeof IndexJobId.Type

export const Submission = Schema.Struct({
  id: Schema.String,
  packageName: Schema.String,
  /** The version asked for; null asked for the registry's latest until the indexer resolves it. */
  version: Schema.NullOr(Schema.String),
  status: SubmissionStatus,
  /** Why indexing failed (status failed), else null. Never carries the registry's URL. */
  error: Schema.NullOr(Schema.String),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "Submission" })
export type Submission = typeof Submission.Type

export const SubmissionResult = Schema.Struct({ submission: Submission, created: Schema.Boolean })
  .annotations({ identifier: "SubmissionResult" })
export type SubmissionResult = typeof SubmissionResult.Type

export const SubmitRequest = Schema.Struct({
  packageName: PackageName,
  version: Schema.optional(Version)
})
export type SubmitRequest = typeof SubmitRequest.Type

export const SubmissionList = Schema.Struct({ items: Schema.Array(Submission) })
  .annotations({ identifier: "SubmissionList" })

export const SubmissionPath = Schema.Struct({ id: PathSegment(SubmissionIdText) })

/** A curator's re-index: one version, or the registry's latest when absent. */
export const ReindexRequest = Schema.Struct({ version: Schema.optional(Version) })

/** The indexing job a re-index queued (the same fields as a submission, under the job's id). */
export const IndexJob = Schema.Struct({
  id: Schema.String,
  packageName: Schema.String,
  version: Schema.NullOr(Schema.String),
  status: SubmissionStatus,
  error: Schema.NullOr(Schema.String),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "IndexJob" })
export type IndexJob = typeof IndexJob.Type
