/** Conversation artifacts (filled in by the media work). */
import { Effect } from "effect"

export default Effect.void
