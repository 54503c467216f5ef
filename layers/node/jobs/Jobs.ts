/**
 * Jobs on the node's database and the package services' runtime (docs/decisions.md, "Package jobs"). A job is
 * one row, written when it starts and ended by one conditional write: whichever of its own end, a cancel, an
 * emergency stop, shutdown or the 30-minute bound comes first ends it, and only that one tells the conversation
 * and the inbox. Each running job is a fiber of this layer's FiberMap; cancelling interrupts it, which cancels
 * the service call over MCP.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, DateTime, Duration, Effect, Exit, FiberMap, Layer, Option, Ref, Schema } from "effect"
import { ArtifactRef } from "../../../schema/node/Artifact.js"
import { type Job, JobError, JobProgress, JobStatus, maxJobList } from "../../../schema/node/Job.js"
import { Surface } from "../../../schema/node/Security.js"
import type { WorkItem } from "../../../schema/node/Work.js"
import { makeId } from "../../../services/common/Ids.js"
import { ArtifactStore, artifactRef } from "../../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import { Inbox } from "../../../services/node/Inbox.js"
import { jobNoticeKind } from "../../../services/node/Notices.js"
import { answerOf, endedSentence, failureText, type JobFailure, jobError, visibleTo } from "../../../services/node/JobRules.js"
import { isJobTool, JobNotFound, JobNotRunning, Jobs, type JobStart, JobUnavailable } from "../../../services/node/Jobs.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { ServiceRuntime, type ServicePackage } from "../../../services/node/ServiceRuntime.js"

/** The spec's bound on a job's run. */
export const maxRun = Duration.minutes(30)

const Row = Schema.Struct({
  id: Schema.String,
  conversationId: Schema.String,
  instanceId: Schema.String,
  bindingId: Schema.String,
  packageId: Schema.String,
  version: Schema.String,
  tool: Schema.String,
  origin: Surface,
  status: JobStatus,
  progress: Schema.NullOr(Schema.parseJson(JobProgress)),
  output: Schema.NullOr(Schema.parseJson(Schema.Unknown)),
  resultRefs: Schema.parseJson(Schema.Array(ArtifactRef)),
  error: Schema.NullOr(Schema.parseJson(JobError)),
  createdAt: Schema.String,
  startedAt: Schema.NullOr(Schema.String),
  endedAt: Schema.NullOr(Schema.String)
})
type Row = typeof Row.Type
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const toJob = (row: Row): Job => ({
  jobId: row.id,
  status: row.status,
  ...(row.progress === null ? {} : { progress: row.progress }),
  resultRefs: row.resultRefs,
  ...(row.output === null ? {} : { output: row.output }),
  ...(row.error === null ? {} : { error: row.error }),
  createdAt: row.createdAt,
  ...(row.startedAt === null ? {} : { startedAt: row.startedAt }),
  ...(row.endedAt === null ? {} : { endedAt: row.endedAt })
})

const bare = (packageId: string) => packageId.replace(/^@[^/]+\//, "")

/** The end a job reaches: its status and what it leaves. */
interface Ending {
  readonly status: "completed" | "failed" | "cancelled"
  readonly output?: unknown
  readonly resultRefs?: ReadonlyArray<ArtifactRef>
  readonly error?: { readonly code: string; readonly message: string }
}

class RanTooLong extends Schema.TaggedError<RanTooLong>()("RanTooLong", {}) {}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const runtime = yield* ServiceRuntime
  const records = yield* PackageRecords
  const artifacts = yield* ArtifactStore
  const store = yield* ConversationStore
  const inbox = yield* Inbox
  const fibers = yield* FiberMap.make<string>()
  const closing = yield* Ref.make(false)

  const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.formatIso(DateTime.unsafeMake(millis)))
  const rows = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    statement.pipe(Effect.flatMap(decodeRows), Effect.orDie)

  const row = (jobId: string) => Effect.map(rows(sql`SELECT * FROM jobs WHERE id = ${jobId}`), (found) => Option.fromNullable(found[0]))

  /** The conversation's timeline and the inbox say the job ended; neither failing undoes the end. */
  const announce = (ended: Row) =>
    Effect.gen(function*() {
      const resultNames = ended.resultRefs.map((ref) => ref.name)
      const text = endedSentence({ tool: ended.tool, status: ended.status, resultNames })
      yield* store.insertMessage({
        conversationId: ended.conversationId,
        role: "assistant",
        origin: null,
        channel: null,
        status: "complete",
        taskId: null,
        hostWritten: { kind: "job-ended", version: 1 },
        blocks: [{ type: "text", text }]
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("A job's end could not be written to its conversation", cause)))
      yield* inbox.notify({
        kind: jobNoticeKind(ended.status),
        conversationId: ended.conversationId,
        subjectId: ended.id,
        data: {
          jobId: ended.id,
          status: ended.status,
          packageId: ended.packageId,
          version: ended.version,
          tool: ended.tool,
          instanceId: ended.instanceId,
          text,
          resultFiles: ended.resultRefs.slice(0, 3).map((ref) => ({ artifactId: ref.artifactId, name: ref.name })),
          ...(ended.error === null ? {} : { error: ended.error })
        },
        source: `job:${ended.packageId}/${ended.tool}`
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("A job's end could not be written to the inbox", cause)))
    })

  /** Ends the job unless something ended it first; true when this call ended it. */
  const finish = (jobId: string, ending: Ending): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      const at = yield* now
      const ended = yield* rows(sql`UPDATE jobs SET status = ${ending.status},
          output = ${ending.output === undefined ? null : JSON.stringify(ending.output)},
          result_refs = ${JSON.stringify(ending.resultRefs ?? [])},
          error = ${ending.error === undefined ? null : JSON.stringify(ending.error)},
          ended_at = ${at}
        WHERE id = ${jobId} AND ended_at IS NULL RETURNING *`)
      if (ended[0] === undefined) return false
      yield* announce(ended[0])
      return true
    })

  const failed = (jobId: string, failure: JobFailure) => finish(jobId, { status: "failed", error: jobError(failure) })

  /** The answer's files become conversation artifacts; one that cannot be stored is left out, not the job. */
  const storeFiles = (job: JobStart, files: ReturnType<typeof answerOf>["files"]) =>
    Effect.forEach(files, (file) =>
      artifacts.create({ conversationId: job.conversationId, kind: "job", mimeType: file.mimeType, name: file.name, bytes: file.bytes }).pipe(
        Effect.map((stored) => [artifactRef(stored)]),
        Effect.catchAll((error) => Effect.as(Effect.logWarning(`A job's result file was not stored (${error._tag})`), []))
      )).pipe(Effect.map((refs) => refs.flat()))

  const run = (jobId: string, pkg: ServicePackage, job: JobStart) =>
    Effect.gen(function*() {
      const at = yield* now
      const started = yield* sql`UPDATE jobs SET status = 'running', started_at = ${at}
        WHERE id = ${jobId} AND status = 'queued' RETURNING id`.pipe(Effect.orDie)
      if (started.length === 0) return
      const onProgress = (progress: typeof JobProgress.Type) =>
        sql`UPDATE jobs SET progress = ${JSON.stringify(progress)} WHERE id = ${jobId} AND ended_at IS NULL`.pipe(Effect.ignore)
      const exit = yield* Effect.exit(
        runtime.call(pkg, {
          tool: job.tool,
          input: job.input,
          onProgress,
          // The node's own bound below is the one that ends the job: the runtime's is only a backstop.
          timeout: Duration.sum(maxRun, Duration.seconds(5))
        }).pipe(Effect.timeoutFail({ duration: maxRun, onTimeout: () => new RanTooLong() }))
      )
      if (Exit.isSuccess(exit)) {
        const result = exit.value
        if (result.isError) return yield* failed(jobId, { _tag: "ToolFailed", said: failureText(result) })
        const answer = answerOf(result)
        const resultRefs = yield* storeFiles(job, answer.files)
        return yield* finish(jobId, { status: "completed", output: answer.output, resultRefs })
      }
      if (Cause.isInterruptedOnly(exit.cause)) return
      const error = Cause.failureOption(exit.cause)
      if (Option.isNone(error)) return yield* failed(jobId, { _tag: "Call", code: "SERVICE_TOOL_FAILED" })
      if (error.value._tag === "RanTooLong") return yield* failed(jobId, { _tag: "TimedOut" })
      const codes: Record<string, string> = {
        ServiceTimedOut: "SERVICE_TIMED_OUT",
        ServiceCancelled: "SERVICE_CANCELLED",
        ServiceUnreachable: "SERVICE_UNREACHABLE",
        ServiceToolFailed: "SERVICE_TOOL_FAILED",
        ServiceToolNotOffered: "RESOURCE_NOT_FOUND"
      }
      return yield* failed(jobId, { _tag: "Call", code: codes[error.value._tag] ?? "SERVICE_TOOL_FAILED" })
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.void
          : Effect.zipRight(Effect.logError("A job ended with a defect", cause), Effect.asVoid(failed(jobId, { _tag: "Call", code: "SERVICE_TOOL_FAILED" }))))
    )

  const start: Jobs["Type"]["start"] = (job) =>
    Effect.gen(function*() {
      if (yield* Ref.get(closing)) return yield* new JobUnavailable({ reason: "shutting-down" })
      const installed = yield* records.installedOne(job.packageId)
      if (Option.isNone(installed) || installed.value.version !== job.version) {
        return yield* new JobUnavailable({ reason: "not-installed" })
      }
      const tool = installed.value.manifest.tools?.find((t) => t.name === job.tool)
      if (tool === undefined || !isJobTool(tool)) return yield* new JobUnavailable({ reason: "not-a-job" })
      const pkg: ServicePackage = {
        packageId: installed.value.packageId,
        digest: installed.value.digest,
        cachePath: installed.value.cachePath,
        manifest: installed.value.manifest
      }
      const jobId = yield* makeId("job")
      const inserted = yield* rows(sql`INSERT INTO jobs ${
        sql.insert({
          id: jobId,
          conversationId: job.conversationId,
          instanceId: job.instanceId,
          bindingId: job.bindingId,
          packageId: job.packageId,
          version: job.version,
          tool: job.tool,
          origin: job.origin,
          status: "queued",
          resultRefs: "[]",
          createdAt: yield* now
        })
      } RETURNING *`)
      yield* FiberMap.run(fibers, jobId, run(jobId, pkg, job))
      return toJob(inserted[0]!)
    })

  const visible = (viewer: Parameters<Jobs["Type"]["get"]>[0], jobId: string) =>
    Effect.flatMap(row(jobId), (found) =>
      Option.isSome(found) && visibleTo(found.value, viewer) ? Effect.succeed(found.value) : new JobNotFound({ jobId }))

  /** Ends a running job as cancelled, then interrupts its call (cancelled over MCP). */
  const stop = (jobId: string, by: "cancel" | "emergency-stop" | "shutdown") =>
    Effect.gen(function*() {
      const ended = yield* finish(jobId, { status: "cancelled", error: jobError({ _tag: "Stopped", by }) })
      yield* FiberMap.remove(fibers, jobId)
      return ended
    })

  const cancelRow = (found: Row) =>
    Effect.gen(function*() {
      if (found.endedAt !== null) return yield* new JobNotRunning({ jobId: found.id, status: found.status })
      if (!(yield* stop(found.id, "cancel"))) {
        const now = yield* row(found.id)
        return yield* new JobNotRunning({ jobId: found.id, status: Option.match(now, { onNone: () => found.status, onSome: (r) => r.status }) })
      }
      return found.id
    })

  const toWork = (found: Row): WorkItem => ({
    workId: found.id,
    kind: "job",
    status: found.status,
    title: `${bare(found.packageId)} · ${found.tool}`,
    conversationId: found.conversationId,
    origin: found.origin,
    createdAt: found.createdAt,
    ...(found.startedAt === null ? {} : { startedAt: found.startedAt }),
    ...(found.endedAt === null ? {} : { endedAt: found.endedAt }),
    job: toJob(found)
  })

  const stopAll: Jobs["Type"]["stopAll"] = (reason) =>
    Effect.gen(function*() {
      const running = yield* rows(sql`SELECT * FROM jobs WHERE ended_at IS NULL`)
      const stopped = yield* Effect.forEach(running, (found) => stop(found.id, reason), { concurrency: "unbounded" })
      return stopped.filter(Boolean).length
    })

  // A job still running when the node stopped is failed, never run again (its call may have had its effect).
  const interrupted = yield* rows(sql`SELECT * FROM jobs WHERE ended_at IS NULL`)
  yield* Effect.forEach(interrupted, (found) => failed(found.id, { _tag: "Interrupted" }), { discard: true })
  // Registered after the FiberMap, so it runs first: jobs end as cancelled before their fibers are interrupted.
  yield* Effect.addFinalizer(() => Effect.zipRight(Ref.set(closing, true), stopAll("shutdown")))

  return Jobs.of({
    start,
    list: (viewer) =>
      rows(sql`SELECT * FROM jobs WHERE conversation_id = ${viewer.conversationId} AND instance_id = ${viewer.instanceId}
        ORDER BY created_at DESC, rowid DESC`).pipe(
          Effect.map((found) => found.filter((r) => visibleTo(r, viewer)).slice(0, maxJobList).map(toJob))
        ),
    get: (viewer, jobId) => Effect.map(visible(viewer, jobId), toJob),
    cancel: (viewer, jobId) =>
      Effect.flatMap(visible(viewer, jobId), cancelRow).pipe(Effect.map((id) => ({ accepted: true, jobId: id }))),
    cancelWork: (jobId) =>
      Effect.flatMap(row(jobId), (found): Effect.Effect<string, JobNotFound | JobNotRunning> =>
        Option.isNone(found) ? Effect.fail(new JobNotFound({ jobId })) : cancelRow(found.value)).pipe(
        Effect.map((id) => ({ accepted: true, workId: id }))
      ),
    work: ({ conversationId, limit, workId }) =>
      rows(sql`SELECT * FROM jobs WHERE 1 = 1
        ${conversationId === undefined ? sql`` : sql`AND conversation_id = ${conversationId}`}
        ${workId === undefined ? sql`` : sql`AND id = ${workId}`}
        ORDER BY created_at DESC, rowid DESC LIMIT ${limit}`).pipe(Effect.map((found) => found.map(toWork))),
    runningIn: (conversationId) =>
      sql`SELECT 1 FROM jobs WHERE conversation_id = ${conversationId} AND ended_at IS NULL LIMIT 1`.pipe(
        Effect.map((found) => found.length > 0),
        Effect.orDie
      ),
    stopAll
  })
})

export const layer = Layer.scoped(Jobs, make)
