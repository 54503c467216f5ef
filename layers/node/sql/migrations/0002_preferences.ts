/** Preferences and their undo step (filled in by the maps work). */
import { Effect } from "effect"

export default Effect.void
