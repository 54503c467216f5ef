/**
 * The audit log: who did what to which target, when, with the state before and
 * after. Append-only (the database refuses UPDATE and DELETE on it). Any
 * service appends with `append`; called inside a `sql.withTransaction` of the
 * same database, the entry commits or rolls back with the change it records.
 */
import { Context, type Effect } from "effect"
import type { AuditPage } from "../../schema/marketplace/Audit.js"

/** What a caller records; the log adds the id and the time (by `Clock`). */
export interface AuditRecord {
  /** The opaque user id of who acted. */
  readonly actorId: string
  /** `area.verb`: `page.create`, `curation.status`, `account.suspend`, `publisher.verify`, … */
  readonly action: string
  /** What kind of thing `target` names: `page`, `package`, `account`, `publisher`, … */
  readonly targetKind: string
  readonly target: string
  /** The relevant state before the action; null for a creation. Never a secret. */
  readonly before?: unknown
  /** The relevant state after it; null for a removal. Never a secret. */
  readonly after?: unknown
}

export interface AuditQuery {
  readonly limit: number
  /** Entries older than this `nextCursor`. */
  readonly cursor?: string | undefined
  readonly action?: string | undefined
  readonly actorId?: string | undefined
  readonly target?: string | undefined
}

export class AuditLog extends Context.Tag("clark/marketplace/AuditLog")<AuditLog, {
  readonly append: (record: AuditRecord) => Effect.Effect<void>
  /** Newest first; filters combine with AND. */
  readonly list: (query: AuditQuery) => Effect.Effect<AuditPage>
}>() {}
