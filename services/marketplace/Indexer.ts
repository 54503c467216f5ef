/** The registry indexer: turns queued jobs into catalogue entries, with a pool of workers per replica. */
import { Context, type Effect, type Option } from "effect"
import type { IndexJobId } from "../../schema/marketplace/Submission.js"

export interface IndexOutcome {
  readonly job: IndexJobId
  readonly packageName: string
  readonly result: "indexed" | "unchanged" | "retry" | "failed"
  readonly version?: string | undefined
  readonly error?: string | undefined
  /** Milliseconds per stage, for the benchmark. */
  readonly timings: { readonly fetch: number; readonly verify: number; readonly unpack: number; readonly store: number }
}

export class Indexer extends Context.Tag("clark/marketplace/Indexer")<Indexer, {
  /** Claims and indexes one due job as `worker`; none when nothing is due. */
  readonly runOnce: (worker: string) => Effect.Effect<Option.Option<IndexOutcome>>
  /** Runs due jobs until none is left; the outcomes in order. */
  readonly drain: Effect.Effect<ReadonlyArray<IndexOutcome>>
  /** The scheduled re-check, once: queues the latest version of every indexed package again. */
  readonly recheck: Effect.Effect<number>
}>() {}
