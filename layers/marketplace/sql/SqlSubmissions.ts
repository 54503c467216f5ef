/**
 * Submissions on SQLite or PostgreSQL. A submission is the submitter's handle on an indexing job: its status,
 * error and resolved version are the job's. Identical submissions racing each other insert one row (the
 * unique key decides) and both answer it.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Schema } from "effect"
import { type IndexJob, type Submission, SubmissionStatus } from "../../../schema/marketplace/Submission.js"
import { makeId } from "../../../services/common/Ids.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import { PackageNotFound } from "../../../services/marketplace/Curation.js"
import type { JobReason } from "../../../services/marketplace/IndexQueue.js"
import { SubmissionNotFound, Submissions } from "../../../services/marketplace/Submissions.js"
import * as SqlAuditLog from "./SqlAuditLog.js"
import { queuedJobRow } from "./SqlIndexQueue.js"

const now = Clock.currentTimeMillis.pipe(Effect.map((ms) => DateTime.formatIso(DateTime.unsafeMake(ms))))

const JobRow = Schema.Struct({
  id: Schema.String,
  packageName: Schema.String,
  requested: Schema.String,
  version: Schema.NullOr(Schema.String),
  status: SubmissionStatus,
  error: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})

const SubmissionRow = Schema.Struct({
  ...JobRow.fields,
  jobId: Schema.String,
  jobUpdatedAt: Schema.String
})

const decodeSubmissions = Schema.decodeUnknown(Schema.Array(SubmissionRow))
const decodeJobs = Schema.decodeUnknown(Schema.Array(JobRow))

const toSubmission = (row: typeof SubmissionRow.Type): Submission => ({
  id: row.id,
  packageName: row.packageName,
  version: row.version ?? (row.requested === "" ? null : row.requested),
  status: row.status,
  error: row.error,
  createdAt: row.createdAt,
  // The submission changes when its job does; a job older than the submission says when it was made.
  updatedAt: row.jobUpdatedAt > row.createdAt ? row.jobUpdatedAt : row.createdAt
})

const toJob = (row: typeof JobRow.Type): IndexJob => ({
  id: row.id,
  packageName: row.packageName,
  version: row.version ?? (row.requested === "" ? null : row.requested),
  status: row.status,
  error: row.error,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const audit = yield* AuditLog

  const submissionColumns = sql.literal(`s.id, s.package_name, s.requested, s.created_at, j.id AS job_id,
    j.version, j.status, j.error, j.updated_at AS job_updated_at, j.updated_at`)

  const findMine = (userId: string, packageName: string, requested: string) =>
    sql`SELECT ${submissionColumns} FROM submissions s JOIN index_jobs j ON j.id = s.job_id
      WHERE s.user_id = ${userId} AND s.package_name = ${packageName} AND s.requested = ${requested}`.pipe(
      Effect.flatMap(decodeSubmissions)
    )

  /**
   * The job of this package and version, created or queued again: a finished job is queued again when
   * `again` says so for its state (a failed one for a submission, any finished one for a re-index).
   */
  const upsertJob = (packageName: string, requested: string, reason: JobReason, again: ReadonlyArray<"indexed" | "failed">) =>
    Effect.gen(function*() {
      const at = yield* now
      const id = yield* makeId("ixj")
      const requeue = again.length === 0
        ? sql.literal("1 = 0")
        : sql.literal(`index_jobs.status IN (${again.map((s) => `'${s}'`).join(", ")})`)
      yield* sql`INSERT INTO index_jobs ${sql.insert(queuedJobRow(id, packageName, requested, reason, at))}
        ON CONFLICT (package_name, requested) DO UPDATE SET status = 'queued', reason = excluded.reason,
          error = NULL, attempts = 0, run_after = excluded.run_after, updated_at = excluded.updated_at
        WHERE ${requeue}`
      const rows = yield* sql`SELECT id, package_name, requested, version, status, error, created_at, updated_at
        FROM index_jobs WHERE package_name = ${packageName} AND requested = ${requested}`.pipe(Effect.flatMap(decodeJobs))
      return rows[0]!
    })

  const submit: Submissions["Type"]["submit"] = (userId, request) =>
    Effect.gen(function*() {
      const requested = request.version ?? ""
      const [existing] = yield* findMine(userId, request.packageName, requested)
      if (existing !== undefined) {
        // Submitting a failed package again is how its submitter asks for another attempt.
        if (existing.status === "failed") yield* upsertJob(request.packageName, requested, "submission", ["failed"])
        const [again] = yield* findMine(userId, request.packageName, requested)
        return { submission: toSubmission(again!), created: false }
      }
      const job = yield* upsertJob(request.packageName, requested, "submission", ["failed"])
      const id = yield* makeId("sub")
      const inserted = yield* sql`INSERT INTO submissions ${
        sql.insert({ id, userId, jobId: job.id, packageName: request.packageName, requested, createdAt: yield* now })
      } ON CONFLICT (user_id, package_name, requested) DO NOTHING RETURNING id`
      const [row] = yield* findMine(userId, request.packageName, requested)
      return { submission: toSubmission(row!), created: inserted.length > 0 }
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("Submissions.submit"))

  const get: Submissions["Type"]["get"] = (userId, id) =>
    sql`SELECT ${submissionColumns} FROM submissions s JOIN index_jobs j ON j.id = s.job_id
      WHERE s.id = ${id} AND s.user_id = ${userId}`.pipe(
      Effect.flatMap(decodeSubmissions),
      Effect.orDie,
      Effect.flatMap(([row]) => row === undefined ? Effect.fail(new SubmissionNotFound({ id })) : Effect.succeed(toSubmission(row)))
    )

  const listMine: Submissions["Type"]["listMine"] = (userId) =>
    sql`SELECT ${submissionColumns} FROM submissions s JOIN index_jobs j ON j.id = s.job_id
      WHERE s.user_id = ${userId} ORDER BY s.created_at DESC, s.id DESC LIMIT 500`.pipe(
      Effect.flatMap(decodeSubmissions),
      Effect.map((rows) => rows.map(toSubmission)),
      Effect.orDie
    )

  const reindex: Submissions["Type"]["reindex"] = (packageName, version, actorId) =>
    Effect.gen(function*() {
      const known = yield* sql`SELECT id FROM packages WHERE name = ${packageName}`
      if (known.length === 0) return yield* Effect.fail(new PackageNotFound({ name: packageName }))
      const job = yield* upsertJob(packageName, version ?? "", "reindex", ["indexed", "failed"])
      // A job already waiting is written anew when it runs, whatever asked for it first.
      yield* sql`UPDATE index_jobs SET reason = 'reindex' WHERE id = ${job.id} AND status = 'queued'`
      yield* audit.append({
        actorId,
        action: "curation.reindex",
        targetKind: "package",
        target: packageName,
        before: null,
        after: { job: job.id, version: version ?? null, status: job.status }
      })
      return toJob(job)
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("ParseError", Effect.die))

  return Submissions.of({ submit, get, listMine, reindex })
})

export const layer = Layer.effect(Submissions, make).pipe(Layer.provide(SqlAuditLog.layer))
