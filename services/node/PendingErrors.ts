/** Routes the contract declares and the node does not serve yet. */
import { Schema } from "effect"

export class NotImplementedYet extends Schema.TaggedError<NotImplementedYet>()("NotImplementedYet", {
  /** What is missing, in a few words (never client input). */
  feature: Schema.String
}) {}
