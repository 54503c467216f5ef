/** Conversation deletion refused: what the person is told and why nothing was deleted. */
import { Schema } from "effect"

/** Unfinished, paused or uncertain tasks, running turns, background work or widget actions settling. */
export class DeletionRefused extends Schema.TaggedError<DeletionRefused>()("DeletionRefused", {
  /** The sentence read back to the person. */
  say: Schema.String
}) {}

/**
 * A deletion permit that cannot be used: never issued, already used, expired, or issued for another
 * conversation or person. Nothing is deleted; the person confirms again.
 */
export class DeletionPermitInvalid extends Schema.TaggedError<DeletionPermitInvalid>()("DeletionPermitInvalid", {
  reason: Schema.Literal("unknown", "used", "expired", "other-conversation", "other-person"),
  say: Schema.String
}) {}

/** A confirmation token that was never handed out, was already answered or expired. */
export class ConfirmationNotFound extends Schema.TaggedError<ConfirmationNotFound>()("ConfirmationNotFound", {}) {}

export type DeletionError = DeletionRefused | DeletionPermitInvalid | ConfirmationNotFound
