/**
 * A unit of work across the node's stores: what runs inside `atomically` is
 * stored together or not at all, and `atomically` returns only once it is
 * committed. Units that arrive together may share one commit (group commit);
 * a unit that fails undoes only its own writes. Turn start-up and checkpoints
 * use it, so a burst of starts costs a few commits, not one each.
 */
import { Context, type Effect } from "effect"

export class Transactions extends Context.Tag("clark/node/Transactions")<Transactions, {
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}
