/** Reading categories and editorial collections. */
import { Context, type Effect, type Option } from "effect"
import type { Category, CollectionState, CollectionSummary } from "../../schema/marketplace/Catalog.js"
import type { CurationStatus, PackageSummary } from "../../schema/marketplace/Package.js"

export interface CollectionWithPackages extends CollectionSummary {
  readonly packages: ReadonlyArray<PackageSummary>
}

export class CatalogStore extends Context.Tag("clark/marketplace/CatalogStore")<CatalogStore, {
  /** Every category, counting packages in the given statuses. */
  readonly categories: (counted: ReadonlyArray<CurationStatus>) => Effect.Effect<ReadonlyArray<Category>>
  readonly category: (slug: string, counted: ReadonlyArray<CurationStatus>) => Effect.Effect<Option.Option<Category>>
  /** Published collections in editorial order. */
  readonly publishedCollections: Effect.Effect<ReadonlyArray<CollectionSummary>>
  /** A published collection with its packages in the given statuses, in editorial order. */
  readonly publishedCollection: (
    slug: string,
    statuses: ReadonlyArray<CurationStatus>
  ) => Effect.Effect<Option.Option<CollectionWithPackages>>
  /** The curator's view of a collection, published or not. */
  readonly collectionState: (slug: string) => Effect.Effect<Option.Option<CollectionState>>
}>() {}
