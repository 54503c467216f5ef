/**
 * The page builder: pages, their draft revisions, publishing. Every write to an
 * existing page names the versions it may proceed from (its `If-Match`) and
 * succeeds only when one of them is the page's current version, checked and
 * moved in the same statement, so of simultaneous writes from one version
 * exactly one wins. Each write is recorded in the audit log in its transaction.
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { DraftDocument, PageState, Revision, RevisionSummary, SavedDraft } from "../../schema/marketplace/PageAdmin.js"
import type { PageKind } from "../../schema/marketplace/Page.js"

export class PageNotFound extends Data.TaggedError("PageNotFound")<{ readonly slug: string }> {}
export class PageExists extends Data.TaggedError("PageExists")<{ readonly slug: string }> {}
export class RevisionNotFound extends Data.TaggedError("RevisionNotFound")<{
  readonly slug: string
  readonly number: number
}> {}
/** The write was based on a version that is no longer the page's. */
export class StaleVersion extends Data.TaggedError("StaleVersion")<{ readonly current: number }> {}
export class NotPublished extends Data.TaggedError("NotPublished")<{ readonly slug: string }> {}

export interface Guarded {
  readonly slug: string
  /** The versions the write may proceed from (the `If-Match` tags). */
  readonly expected: ReadonlyArray<number>
  readonly actorId: string
}

export class PageEditor extends Context.Tag("clark/marketplace/PageEditor")<PageEditor, {
  /** Every page, by slug. */
  readonly list: Effect.Effect<ReadonlyArray<PageState>>
  readonly get: (slug: string) => Effect.Effect<Option.Option<PageState>>
  readonly create: (input: {
    readonly slug: string
    readonly kind: PageKind
    readonly title: string
    readonly actorId: string
  }) => Effect.Effect<PageState, PageExists>
  /** Newest first; none when the page does not exist. */
  readonly revisions: (slug: string) => Effect.Effect<Option.Option<ReadonlyArray<RevisionSummary>>>
  readonly revision: (slug: string, number: number) => Effect.Effect<Option.Option<Revision>>
  /** Appends a revision numbered one above the highest. */
  readonly saveDraft: (
    input: Guarded & { readonly document: DraftDocument }
  ) => Effect.Effect<SavedDraft, PageNotFound | StaleVersion>
  /** Makes the revision the one GET /pages/{slug} serves (re-publishing an older one is a rollback). */
  readonly publish: (
    input: Guarded & { readonly revisionNumber: number }
  ) => Effect.Effect<PageState, PageNotFound | StaleVersion | RevisionNotFound>
  /** The public route answers 404 again; the revisions stay. */
  readonly unpublish: (input: Guarded) => Effect.Effect<PageState, PageNotFound | StaleVersion | NotPublished>
}>() {}

// ---------------------------------------------------------------------------
// Rules a draft must meet beyond its schema

/** How deep blocks may nest, and how many a document may hold in all. */
export const maxBlockDepth = 8
export const maxBlocks = 1000

export interface DocumentIssue {
  readonly path: string
  readonly message: string
}

interface BlockLike {
  readonly id: string
  readonly children?: ReadonlyArray<BlockLike> | undefined
}

/**
 * What is wrong with a document the schema accepted: block ids repeated
 * anywhere in the tree (an editor addresses blocks by id), blocks nested
 * deeper than `maxBlockDepth`, more than `maxBlocks` blocks. Empty when it is
 * fine. Paths name the first offending block, as `blocks.0.children.2`.
 */
export const documentIssues = (document: { readonly blocks: ReadonlyArray<BlockLike> }): ReadonlyArray<DocumentIssue> => {
  const issues: Array<DocumentIssue> = []
  const seen = new Map<string, string>()
  let count = 0
  const walk = (blocks: ReadonlyArray<BlockLike>, path: string, depth: number): void => {
    blocks.forEach((block, index) => {
      const here = `${path}.${index}`
      count += 1
      if (count === maxBlocks + 1) issues.push({ path: here, message: `a document holds at most ${maxBlocks} blocks` })
      const first = seen.get(block.id)
      if (first === undefined) seen.set(block.id, here)
      else issues.push({ path: `${here}.id`, message: `the block id ${JSON.stringify(block.id)} is used already at ${first}` })
      if (block.children === undefined || block.children.length === 0) return
      if (depth === maxBlockDepth) {
        issues.push({ path: `${here}.children`, message: `blocks nest at most ${maxBlockDepth} levels deep` })
        return
      }
      walk(block.children, `${here}.children`, depth + 1)
    })
  }
  walk(document.blocks, "document.blocks", 1)
  return issues
}
