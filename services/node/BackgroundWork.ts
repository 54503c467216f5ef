/**
 * Background work's retry and cancel (spec, "Background work retry"). On this node background work is a
 * message's task: the turn that answers it, which goes on in the background once the waiting route answers 202
 * (docs/decisions.md, "Background work"); package jobs join with issue 15 (`kind: job`).
 */
import { Context, type Effect } from "effect"
import type { JobStatus } from "../../schema/node/Job.js"
import type { Caller } from "../../schema/node/Security.js"
import type { AlreadyRetried, BackgroundBusy, WorkNotFound, WorkNotRetryable, WorkNotRunning } from "./InboxErrors.js"

export interface Retried {
  readonly workId: string
  readonly retryOf: string
}

export class BackgroundWork extends Context.Tag("clark/node/BackgroundWork")<BackgroundWork, {
  /** New work with its own id, the same request and conversation; one retry per work. */
  readonly retry: (
    workId: string,
    caller: Caller
  ) => Effect.Effect<Retried, WorkNotFound | AlreadyRetried | WorkNotRetryable | BackgroundBusy>
  readonly cancel: (
    workId: string,
    caller: Caller
  ) => Effect.Effect<{ readonly accepted: boolean; readonly workId: string }, WorkNotFound | WorkNotRunning>
}>() {}

/** Work that failed, was stopped or was cut off by a restart can be retried; finished or running work cannot. */
export const isRetryable = (status: JobStatus): boolean => status === "failed" || status === "cancelled"
