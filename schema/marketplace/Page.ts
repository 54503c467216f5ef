/** Published pages: a versioned block document. */
import { Schema } from "effect"
import { DateTimeString, PathSegment } from "../common/Text.js"

export const PageKind = Schema.Literal("custom", "legal", "docs", "landing", "category", "collection")
export type PageKind = typeof PageKind.Type

export interface Block {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly props: { readonly [key: string]: unknown }
  readonly children?: ReadonlyArray<Block> | undefined
}

export const Block: Schema.Schema<Block> = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  version: Schema.Int,
  props: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  children: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<Block> => Block)))
}).annotations({ identifier: "Block" })

export const PageDocument = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  layout: Schema.Struct({ id: Schema.String, version: Schema.Int }),
  meta: Schema.Struct({
    title: Schema.String,
    description: Schema.String,
    locale: Schema.String,
    noindex: Schema.Boolean,
    image: Schema.optional(Schema.String)
  }),
  blocks: Schema.Array(Block)
}).annotations({ identifier: "PageDocument" })
export type PageDocument = typeof PageDocument.Type

export const PublishedPage = Schema.Struct({
  page: Schema.Struct({ id: Schema.String, slug: Schema.String, kind: PageKind, title: Schema.String }),
  revisionId: Schema.String,
  revisionNumber: Schema.Int,
  publishedAt: DateTimeString,
  document: PageDocument
}).annotations({ identifier: "PublishedPage" })
export type PublishedPage = typeof PublishedPage.Type

export const pageSlugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\/[a-z0-9]+(?:-[a-z0-9]+)*)*$/

export const PageSlug = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(160),
  Schema.pattern(pageSlugPattern, {
    message: () => "must be lowercase alphanumeric segments joined by single hyphens, nested with '/'"
  })
).annotations({ identifier: "PageSlug" })

export const PagePath = Schema.Struct({ slug: PathSegment(PageSlug) })
export const PageParams = Schema.Struct({ format: Schema.optional(Schema.Literal("json", "md")) })
