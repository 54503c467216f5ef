/** The audit log: curator, publisher and admin actions, append-only, read by admins. */
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"

export const AuditEntry = Schema.Struct({
  id: Schema.String,
  at: DateTimeString,
  /** The opaque user id of who acted; no name or email. */
  actorId: Schema.String,
  /** `area.verb`, e.g. `page.publish`, `curation.status`, `account.suspend`. */
  action: Schema.String,
  targetKind: Schema.String,
  target: Schema.String,
  /** The relevant state before and after; null where there was none (a creation) or it is not kept. */
  before: Schema.NullOr(Schema.Unknown),
  after: Schema.NullOr(Schema.Unknown)
}).annotations({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

export const AuditPage = Schema.Struct({
  items: Schema.Array(AuditEntry),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditPage" })
export type AuditPage = typeof AuditPage.Type

const Filter = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

/** Newest first; `cursor` is the `nextCursor` of the previous page. */
export const AuditParams = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))),
  cursor: Schema.optional(Schema.String.pipe(Schema.pattern(/^[1-9][0-9]{0,17}$/, { message: () => "must be a nextCursor value" }))),
  action: Schema.optional(Filter),
  actorId: Schema.optional(Filter),
  target: Schema.optional(Filter)
})
