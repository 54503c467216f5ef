/**
 * A unit of work across the node's stores: what runs inside `atomically` is
 * stored together or not at all, in one commit. Turn start-up uses it so a new
 * turn's rows, its audit entry and the history its model reads cost one
 * transaction, not one each.
 */
import { Context, type Effect } from "effect"

export class Transactions extends Context.Tag("clark/node/Transactions")<Transactions, {
  readonly atomically: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}
