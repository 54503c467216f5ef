/** Submissions of registry packages for indexing, as their submitters and curators see them. */
import { Context, type Effect, Schema } from "effect"
import type { PackageNotFound } from "./Curation.js"
import type { IndexJob, Submission, SubmissionResult, SubmitRequest } from "../../schema/marketplace/Submission.js"

export class SubmissionNotFound extends Schema.TaggedError<SubmissionNotFound>()("SubmissionNotFound", {
  id: Schema.String
}) {}

export class Submissions extends Context.Tag("clark/marketplace/Submissions")<Submissions, {
  /**
   * The caller's submission of this package and version (absent: the registry's latest), created with its
   * indexing job when new. Asked again, the same submission (`created: false`); a failed one is queued again.
   */
  readonly submit: (userId: string, request: SubmitRequest) => Effect.Effect<SubmissionResult>
  /** Only the submitter's own: another account's id is not found. */
  readonly get: (userId: string, id: string) => Effect.Effect<Submission, SubmissionNotFound>
  /** The caller's submissions, newest first. */
  readonly listMine: (userId: string) => Effect.Effect<ReadonlyArray<Submission>>
  /**
   * A curator's re-index of a catalogue package: its version (or latest) queued again and written anew even
   * when already indexed with the same bytes. Audited as `curation.reindex` by `actorId`, in the same transaction.
   */
  readonly reindex: (packageName: string, version: string | undefined, actorId: string) => Effect.Effect<IndexJob, PackageNotFound>
}>() {}
