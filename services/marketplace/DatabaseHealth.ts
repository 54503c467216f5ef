/** A live round-trip to the database, for the health route. */
import { Context, type Effect } from "effect"

export class DatabaseHealth extends Context.Tag("clark/marketplace/DatabaseHealth")<DatabaseHealth, {
  /** Succeeds with whether the database answered in time; never fails. */
  readonly check: Effect.Effect<boolean>
}>() {}
