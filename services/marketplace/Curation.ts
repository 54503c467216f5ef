/** Curator decisions: curation status, featuring, and editorial collections. */
import { Context, Data, type Effect } from "effect"
import type { CollectionCommand } from "../../schema/marketplace/Catalog.js"
import type { CurationResult } from "../../schema/marketplace/Curation.js"
import type { CurationStatus } from "../../schema/marketplace/Package.js"

export class PackageNotFound extends Data.TaggedError("PackageNotFound")<{ readonly name: string }> {}
export class CollectionNotFound extends Data.TaggedError("CollectionNotFound")<{ readonly slug: string }> {}
export class CollectionExists extends Data.TaggedError("CollectionExists")<{ readonly slug: string }> {}
export class NotInCollection extends Data.TaggedError("NotInCollection")<{
  readonly slug: string
  readonly name: string
}> {}
/** A reorder that does not name exactly the collection's current items, once each. */
export class ReorderMismatch extends Data.TaggedError("ReorderMismatch")<{
  readonly missing: ReadonlyArray<string>
  readonly unexpected: ReadonlyArray<string>
  readonly repeated: ReadonlyArray<string>
}> {}

export type CollectionCommandError =
  | CollectionNotFound
  | CollectionExists
  | PackageNotFound
  | NotInCollection
  | ReorderMismatch

/** One entry of the append-only curation log. */
export interface CurationLogEntry {
  readonly packageName: string
  readonly actorId: string
  readonly from: CurationStatus
  readonly to: CurationStatus
  readonly reason: string | null
  readonly at: string
}

export class CurationStore extends Context.Tag("clark/marketplace/CurationStore")<CurationStore, {
  /** Sets the status and logs the change with its reason, in one transaction. */
  readonly setStatus: (input: {
    readonly name: string
    readonly status: CurationStatus
    readonly reason?: string | undefined
    readonly actorId: string
  }) => Effect.Effect<CurationResult, PackageNotFound>
  /**
   * Featuring makes a package `featured` from any status; un-featuring turns a
   * featured package into a plain `listed` one and leaves any other unchanged.
   */
  readonly setFeatured: (input: {
    readonly name: string
    readonly featured: boolean
    readonly actorId: string
  }) => Effect.Effect<CurationResult, PackageNotFound>
  /** The package's log, oldest first. */
  readonly log: (name: string) => Effect.Effect<ReadonlyArray<CurationLogEntry>>
  /**
   * Applies one collection command in a transaction. `add_item` appends (re-adding
   * keeps the position and replaces the note); `reorder` must name exactly the
   * current items. With an actor, the command is recorded in the audit log in
   * the same transaction.
   */
  readonly applyCollectionCommand: (
    slug: string,
    command: CollectionCommand,
    actorId?: string
  ) => Effect.Effect<void, CollectionCommandError>
}>() {}
