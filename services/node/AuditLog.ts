/** The append-only audit log: origins, stop sources, person-only refusals. */
import { Context, type Effect } from "effect"

export interface AuditEntry {
  readonly kind: string
  readonly conversationId?: string | undefined
  readonly surface?: string | undefined
  /** `text`, `voice`, or `voice-agent` for what the agent asked for while answering something spoken. */
  readonly channel?: string | undefined
  readonly detail?: Record<string, unknown> | undefined
}

export interface AuditRecord extends AuditEntry {
  readonly id: number
  readonly at: string
}

export class AuditLog extends Context.Tag("clark/node/AuditLog")<AuditLog, {
  readonly append: (entry: AuditEntry) => Effect.Effect<void>
  /** Several entries in one statement, in order (a widget press's row with its tool call's). */
  readonly appendAll: (entries: ReadonlyArray<AuditEntry>) => Effect.Effect<void>
  readonly list: (filter?: { readonly kind?: string }) => Effect.Effect<ReadonlyArray<AuditRecord>>
}>() {}
