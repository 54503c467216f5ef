/** Categories and editorial collections. */
import { Schema } from "effect"
import { Slug } from "../common/Text.js"
import { PackageName, PackageSummary } from "./Package.js"

export const Category = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  description: Schema.String,
  packageCount: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
}).annotations({ identifier: "Category" })
export type Category = typeof Category.Type

export const CategoryList = Schema.Struct({ items: Schema.Array(Category) })

export const CollectionSummary = Schema.Struct({
  slug: Schema.String,
  title: Schema.String,
  description: Schema.String
}).annotations({ identifier: "CollectionSummary" })
export type CollectionSummary = typeof CollectionSummary.Type

export const CollectionList = Schema.Struct({ items: Schema.Array(CollectionSummary) })

export const Collection = Schema.Struct({
  ...CollectionSummary.fields,
  packages: Schema.Array(PackageSummary)
}).annotations({ identifier: "Collection" })
export type Collection = typeof Collection.Type

export const CollectionItem = Schema.Struct({
  packageName: Schema.String,
  position: Schema.Int,
  note: Schema.NullOr(Schema.String)
})

/** The curator's view: unpublished state and non-public items included. */
export const CollectionState = Schema.Struct({
  ...CollectionSummary.fields,
  published: Schema.Boolean,
  position: Schema.Int,
  items: Schema.Array(CollectionItem)
}).annotations({ identifier: "CollectionState" })
export type CollectionState = typeof CollectionState.Type

export const SlugPath = Schema.Struct({ slug: Slug })

export const CollectionTitle = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120))
export const CollectionDescription = Schema.String.pipe(Schema.maxLength(600))
export const CollectionPosition = Schema.Int.pipe(Schema.between(0, 10000))

export const CreateCollection = Schema.Struct({
  action: Schema.Literal("create"),
  title: CollectionTitle,
  description: Schema.optionalWith(CollectionDescription, { default: () => "" }),
  published: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  position: Schema.optionalWith(CollectionPosition, { default: () => 0 })
})

export const UpdateCollection = Schema.Struct({
  action: Schema.Literal("update"),
  title: Schema.optional(CollectionTitle),
  description: Schema.optional(CollectionDescription),
  published: Schema.optional(Schema.Boolean),
  position: Schema.optional(CollectionPosition)
})

export const AddCollectionItem = Schema.Struct({
  action: Schema.Literal("add_item"),
  packageName: PackageName,
  note: Schema.optional(Schema.String.pipe(Schema.maxLength(300)))
})

export const RemoveCollectionItem = Schema.Struct({
  action: Schema.Literal("remove_item"),
  packageName: PackageName
})

export const ReorderCollection = Schema.Struct({
  action: Schema.Literal("reorder"),
  packageNames: Schema.Array(PackageName).pipe(Schema.minItems(1), Schema.maxItems(200))
})

export const CollectionCommand = Schema.Union(
  CreateCollection,
  UpdateCollection,
  AddCollectionItem,
  RemoveCollectionItem,
  ReorderCollection
).annotations({ identifier: "CollectionCommand" })
export type CollectionCommand = typeof CollectionCommand.Type
