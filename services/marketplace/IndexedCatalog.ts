/** What the indexer reads from and writes to the catalogue. */
import { Context, type Effect } from "effect"
import type { ImportVersion } from "../../schema/marketplace/Import.js"
import type { CurationStatus } from "../../schema/marketplace/Package.js"

export interface IndexedEntry {
  readonly name: string
  readonly displayName: string
  readonly description: string
  readonly keywords: ReadonlyArray<string>
  readonly homepage: string | null
  readonly repositoryUrl: string | null
  readonly license: string | null
  /** Used only when the catalogue has no such package yet; an existing one keeps its curation status. */
  readonly initialStatus: CurationStatus
  readonly version: ImportVersion
}

export class IndexedCatalog extends Context.Tag("clark/marketplace/IndexedCatalog")<IndexedCatalog, {
  /** The registry integrity the catalogue holds for this version, if it holds it. */
  readonly indexedIntegrity: (name: string, version: string) => Effect.Effect<string | undefined>
  /** Names of other packages close enough in length to be mistaken for `name` (the similarity check narrows). */
  readonly namesNear: (name: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Adds or replaces the version, keeping the package's other versions, curation status, publisher and
   * category; the latest version is the newest published. Through the catalogue importer, in one transaction.
   */
  readonly write: (entry: IndexedEntry) => Effect.Effect<void>
}>() {}
