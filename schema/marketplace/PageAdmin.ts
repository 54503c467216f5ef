/**
 * The page-builder admin API: pages, their draft revisions, publishing. Every
 * write to an existing page is guarded by `If-Match` on the page's version and
 * answers with its new `ETag`.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString, PathSegment } from "../common/Text.js"
import {
  BadRequestWire,
  ConflictWire,
  NotFoundWire,
  PreconditionFailedWire,
  PreconditionRequiredWire,
  RateLimitedWire,
  ValidationFailedWire
} from "./Errors.js"
import { PageDocument, PageKind, PageSlug } from "./Page.js"
import { Authentication } from "./Security.js"

/** Block and layout types: lowercase words joined by hyphens, optionally namespaced (`acme/hero`). */
const typePattern = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\/[a-z][a-z0-9]*(?:-[a-z0-9]+)*)?$/

const BlockType = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(64),
  Schema.pattern(typePattern, { message: () => "must be lowercase words joined by hyphens, optionally namespace/type" })
)

/** Layouts and blocks carry integer versions from 1. */
const ComponentVersion = Schema.Int.pipe(Schema.between(1, 1_000_000))

const BlockId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))

/** A block of a draft as sent: the published Block shape with bounds. */
export interface BlockInput {
  readonly id: string
  readonly type: string
  readonly version: number
  readonly props: { readonly [key: string]: unknown }
  readonly children?: ReadonlyArray<BlockInput> | undefined
}

export const BlockInput: Schema.Schema<BlockInput> = Schema.Struct({
  id: BlockId,
  type: BlockType,
  version: ComponentVersion,
  props: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  children: Schema.optional(Schema.Array(Schema.suspend((): Schema.Schema<BlockInput> => BlockInput)).pipe(Schema.maxItems(200)))
}).annotations({ identifier: "BlockInput" })

/** A draft document: schemaVersion 1, a versioned layout, meta and blocks, validated before it is stored. */
export const DraftDocument = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  layout: Schema.Struct({ id: BlockType, version: ComponentVersion }),
  meta: Schema.Struct({
    title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    description: Schema.String.pipe(Schema.maxLength(500)),
    locale: Schema.String.pipe(
      Schema.pattern(/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, { message: () => "must be a language tag such as en or pt-BR" }),
      Schema.maxLength(35)
    ),
    noindex: Schema.Boolean,
    image: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
  }),
  blocks: Schema.Array(BlockInput).pipe(Schema.maxItems(200))
}).annotations({ identifier: "DraftDocument" })
export type DraftDocument = typeof DraftDocument.Type

export const RevisionSummary = Schema.Struct({
  id: Schema.String,
  number: Schema.Int,
  createdAt: DateTimeString,
  /** When this revision was last published; null when it never was. */
  publishedAt: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "RevisionSummary" })
export type RevisionSummary = typeof RevisionSummary.Type

/** A page as its editors see it: drafts, the published revision and the version writes must name. */
export const PageState = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  kind: PageKind,
  title: Schema.String,
  /** Moves on every write; the `ETag` is this number in quotes. */
  version: Schema.Int,
  publishedRevision: Schema.NullOr(RevisionSummary),
  latestRevision: Schema.NullOr(RevisionSummary),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "PageState" })
export type PageState = typeof PageState.Type

export const PageStateList = Schema.Struct({ items: Schema.Array(PageState) })

/** Stored documents are read back in the published shape: an imported page need not meet a draft's bounds. */
export const Revision = Schema.Struct({
  ...RevisionSummary.fields,
  document: PageDocument
}).annotations({ identifier: "Revision" })
export type Revision = typeof Revision.Type

export const RevisionList = Schema.Struct({ items: Schema.Array(RevisionSummary) })

export const SavedDraft = Schema.Struct({ page: PageState, revision: Revision }).annotations({
  identifier: "SavedDraft"
})
export type SavedDraft = typeof SavedDraft.Type

export const CreatePageRequest = Schema.Struct({
  slug: PageSlug,
  kind: PageKind,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})

export const SaveDraftRequest = Schema.Struct({ document: DraftDocument })

export const PublishRequest = Schema.Struct({ revisionNumber: Schema.Int.pipe(Schema.between(1, 1_000_000_000)) })

export const AdminPagePath = Schema.Struct({ slug: PathSegment(PageSlug) })
export const RevisionPath = Schema.Struct({
  slug: PathSegment(PageSlug),
  number: Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1_000_000_000))
})

/** `If-Match` on every write to an existing page; 428 when it is missing, 412 when it is not current. */
export const IfMatchHeaders = Schema.Struct({
  "if-match": Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

// ---------------------------------------------------------------------------
// The group (added to MarketplaceApi in Api.ts)

/** Reads need pages:read, drafts pages:write, publishing pages:publish (checked by the handlers). */
export class PageAdminGroup extends HttpApiGroup.make("pageAdmin")
  .add(HttpApiEndpoint.get("list", "/admin/pages").addSuccess(PageStateList))
  .add(
    HttpApiEndpoint.post("create", "/admin/pages")
      .setPayload(CreatePageRequest)
      .addSuccess(PageState, { status: 201 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Create a page without revisions; answers its ETag")
  )
  .add(
    HttpApiEndpoint.get("get", "/admin/pages/:slug")
      .setPath(AdminPagePath)
      .addSuccess(PageState)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "The page as its editors see it; answers its ETag")
  )
  .add(
    HttpApiEndpoint.get("revisions", "/admin/pages/:slug/revisions")
      .setPath(AdminPagePath)
      .addSuccess(RevisionList)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.get("revision", "/admin/pages/:slug/revisions/:number")
      .setPath(RevisionPath)
      .addSuccess(Revision)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("saveDraft", "/admin/pages/:slug/revisions")
      .setPath(AdminPagePath)
      .setHeaders(IfMatchHeaders)
      .setPayload(SaveDraftRequest)
      .addSuccess(SavedDraft, { status: 201 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(PreconditionFailedWire)
      .addError(PreconditionRequiredWire)
      .annotate(OpenApi.Description, "Save a draft revision (If-Match: the page's ETag); answers the new ETag")
  )
  .add(
    HttpApiEndpoint.post("publish", "/admin/pages/:slug/publish")
      .setPath(AdminPagePath)
      .setHeaders(IfMatchHeaders)
      .setPayload(PublishRequest)
      .addSuccess(PageState)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(PreconditionFailedWire)
      .addError(PreconditionRequiredWire)
      .annotate(OpenApi.Description, "Publish a revision (If-Match: the page's ETag); answers the new ETag")
  )
  .add(
    HttpApiEndpoint.post("unpublish", "/admin/pages/:slug/unpublish")
      .setPath(AdminPagePath)
      .setHeaders(IfMatchHeaders)
      .addSuccess(PageState)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .addError(PreconditionFailedWire)
      .addError(PreconditionRequiredWire)
      .annotate(OpenApi.Description, "Take the page off the public route (If-Match: the page's ETag); answers the new ETag")
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}
