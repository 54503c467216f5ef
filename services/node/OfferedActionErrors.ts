/** Refusals of the offered-action routes (the app reporting what a widget did with a request). */
import { Schema } from "effect"

/** No such request for this widget in this conversation. */
export class OfferedRequestNotFound extends Schema.TaggedError<OfferedRequestNotFound>()("OfferedRequestNotFound", {
  requestId: Schema.String
}) {}

/** The request was answered already (or given up as unknown): the first answer stands. */
export class OfferedRequestAnswered extends Schema.TaggedError<OfferedRequestAnswered>()("OfferedRequestAnswered", {
  requestId: Schema.String,
  status: Schema.String
}) {}

/** A refusal must name its code: `refuse(code, why)`. */
export class OfferedReportInvalid extends Schema.TaggedError<OfferedReportInvalid>()("OfferedReportInvalid", {
  field: Schema.String,
  reason: Schema.String
}) {}

export type OfferedActionError = OfferedRequestNotFound | OfferedRequestAnswered | OfferedReportInvalid
