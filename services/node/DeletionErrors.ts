/** Conversation deletion refused: what the person is told and why nothing was deleted. */
import { Schema } from "effect"

/** Unfinished, paused or uncertain tasks, running turns, background work or widget actions settling. */
export class DeletionRefused extends Schema.TaggedError<DeletionRefused>()("DeletionRefused", {
  /** The sentence read back to the person. */
  say: Schema.String
}) {}
