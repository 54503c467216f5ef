/**
 * The indexer's queue, shared by every replica: a job is claimed under a lease by one worker at a time, and
 * each write that ends it says which worker it was from, so a worker whose lease ran out (and whose job
 * another took) changes nothing.
 */
import { Context, type Effect, type Option } from "effect"
import type { IndexJobId } from "../../schema/marketplace/Submission.js"

export type JobReason = "submission" | "recheck" | "reindex"

export interface ClaimedJob {
  readonly id: IndexJobId
  readonly packageName: string
  /** The version asked for; undefined means the registry's latest. */
  readonly requested: string | undefined
  readonly reason: JobReason
  /** Claims so far, this one included. */
  readonly attempts: number
}

export class IndexQueue extends Context.Tag("clark/marketplace/IndexQueue")<IndexQueue, {
  /** The oldest job due (queued and due, or indexing with an expired lease), now leased to `worker`. */
  readonly claim: (worker: string, leaseMillis: number) => Effect.Effect<Option.Option<ClaimedJob>>
  readonly finish: (job: ClaimedJob, worker: string, version: string) => Effect.Effect<boolean>
  /** Back to queued, due at `runAfter` (epoch ms), with the error kept for the submitter to see. */
  readonly retry: (job: ClaimedJob, worker: string, error: string, runAfter: number) => Effect.Effect<boolean>
  readonly fail: (job: ClaimedJob, worker: string, error: string) => Effect.Effect<boolean>
  /** Queues again the latest-version job of every indexed package (the scheduled re-check); how many. */
  readonly queueRechecks: Effect.Effect<number>
}>() {}
