/**
 * Package jobs (spec, "Long-running package jobs", "Background job status"; docs/decisions.md, "Package jobs"):
 * a capability declaring `execution: {kind: job, version: 1}`, pressed from a widget's button, runs in the
 * background for at most 30 minutes. Only the widget whose own button started a job reads or cancels it, in the
 * same conversation, under the same package version and capability. A restart ends a running job as failed and
 * never runs it again; a conversation's Stop leaves it running, emergency stop and shutdown cancel it. When a job
 * ends, the conversation (a host-written message) and the inbox (a `job-ended` notice) say so.
 */
import { Context, type Effect } from "effect"
import type { Job } from "../../schema/node/Job.js"
import type { Surface } from "../../schema/node/Security.js"
import type { WorkItem } from "../../schema/node/Work.js"
import type { JobNotFound, JobNotRunning, JobUnavailable } from "./JobErrors.js"

export * from "./JobErrors.js"

/** What the press of a job binding hands over once its checks passed (policy, ledger, rate): the call to run. */
export interface JobStart {
  readonly conversationId: string
  readonly instanceId: string
  readonly bindingId: string
  /** The instance's package and version: the job is answered only under these. */
  readonly packageId: string
  readonly version: string
  /** The capability: a tool of the package declaring `execution: {kind: job, version: 1}`. */
  readonly tool: string
  readonly input: Readonly<Record<string, unknown>>
  /** Who pressed (the person, the assistant or voice through the same button, a machine client). */
  readonly origin: Surface
}

/** The widget asking: its instance in a conversation and the capabilities its own buttons call. */
export interface JobViewer {
  readonly conversationId: string
  readonly instanceId: string
  readonly packageId: string
  readonly version: string
  readonly tools: ReadonlyArray<string>
}

export class Jobs extends Context.Tag("clark/node/Jobs")<Jobs, {
  /** Records the job (queued), starts it in the background and answers it at once. */
  readonly start: (request: JobStart) => Effect.Effect<Job, JobUnavailable>
  /** The viewer's jobs, newest first, at most 20. */
  readonly list: (viewer: JobViewer) => Effect.Effect<ReadonlyArray<Job>>
  readonly get: (viewer: JobViewer, jobId: string) => Effect.Effect<Job, JobNotFound>
  /** Ends a running job as cancelled (its call is cancelled over MCP); it may already have had its effect. */
  readonly cancel: (viewer: JobViewer, jobId: string) => Effect.Effect<{ readonly accepted: boolean; readonly jobId: string }, JobNotFound | JobNotRunning>
  /** POST /work/{id}/cancel of a job: the person's own work list, no widget to match. */
  readonly cancelWork: (jobId: string) => Effect.Effect<{ readonly accepted: boolean; readonly workId: string }, JobNotFound | JobNotRunning>
  /** Jobs as GET /work lists them, newest first. */
  readonly work: (query: {
    readonly conversationId?: string | undefined
    readonly workId?: string | undefined
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<WorkItem>>
  /** Whether a job of the conversation has not ended (a conversation with one cannot be deleted). */
  readonly runningIn: (conversationId: string) => Effect.Effect<boolean>
  /** Cancels every job that has not ended (emergency stop, shutdown); answers how many. */
  readonly stopAll: (reason: "emergency-stop" | "shutdown") => Effect.Effect<number>
}>() {}

/** Whether the tool is a job capability (`execution: {kind: job, version: 1}` in its tools facet). */
export const isJobTool = (tool: { readonly execution?: { readonly kind: string; readonly version: number } | undefined }) =>
  tool.execution?.kind === "job" && tool.execution.version === 1
