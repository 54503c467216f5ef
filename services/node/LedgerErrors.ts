/**
 * What the effect ledger can fail with. None knows an HTTP status: the node's one mapping module
 * (src/node/http/Errors.ts) turns each into its wire code. `detail` is the database's own words for the log
 * (a path under the data dir at most); it never reaches a response.
 */
import { Schema } from "effect"

/**
 * The ledger could not be written (or opened): its file or folder is read-only, missing, full or corrupt.
 * A call that needed its record was not sent.
 */
export class LedgerUnavailable extends Schema.TaggedError<LedgerUnavailable>()("LedgerUnavailable", {
  operation: Schema.Literal("record", "answer", "unknown", "reconcile", "mark-checked"),
  detail: Schema.String
}) {}

/** No effect with this id in this node's ledger (another node's or another data dir's effect is not here either). */
export class EffectNotFound extends Schema.TaggedError<EffectNotFound>()("EffectNotFound", {
  effectId: Schema.String
}) {}

/** The effect is not waiting for the person's answer: it was answered, or already reconciled. */
export class EffectNotUnknown extends Schema.TaggedError<EffectNotUnknown>()("EffectNotUnknown", {
  effectId: Schema.String,
  status: Schema.Literal("sent", "answered", "confirmed", "did-not-happen")
}) {}

export type LedgerError = LedgerUnavailable | EffectNotFound | EffectNotUnknown
