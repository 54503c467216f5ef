/** Whether catalogue data changed: cached reads compare versions before answering. */
import { Context, type Effect } from "effect"

export class CatalogVersion extends Context.Tag("clark/marketplace/CatalogVersion")<CatalogVersion, {
  /** Changes whenever a write that could alter a package read has committed. */
  readonly current: Effect.Effect<string>
}>() {}
