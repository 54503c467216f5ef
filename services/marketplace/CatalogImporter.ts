/** Loading a whole catalogue document, all or nothing. */
import { Context, type Effect, Schema } from "effect"
import type { ImportDocument, ImportPackage } from "../../schema/marketplace/Import.js"

export class ImportRejected extends Schema.TaggedError<ImportRejected>()("ImportRejected", {
  /** Where in the document, e.g. `packages[3].categorySlug`. */
  path: Schema.String,
  message: Schema.String
}) {}

export interface ImportCounts {
  readonly categories: number
  readonly publishers: number
  readonly packages: number
  readonly versions: number
  readonly collections: number
  readonly pages: number
}

export class CatalogImporter extends Context.Tag("clark/marketplace/CatalogImporter")<CatalogImporter, {
  /**
   * Writes the document in one transaction; existing rows with the same names are replaced, except
   * publisher memberships: listed ones are added or get the listed role, others are kept.
   */
  readonly load: (document: ImportDocument) => Effect.Effect<ImportCounts, ImportRejected>
  /** Writes packages only (their publishers and categories must exist), in one transaction. */
  readonly loadPackages: (
    packages: ReadonlyArray<ImportPackage>,
    pathPrefix?: string
  ) => Effect.Effect<{ readonly packages: number; readonly versions: number }, ImportRejected>
  readonly isEmpty: Effect.Effect<boolean>
  /** Updates the planner's statistics after a bulk load, so the first queries do not run on empty ones. */
  readonly refreshStatistics: Effect.Effect<void>
}>() {}
