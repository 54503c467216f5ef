/** Reading published pages. */
import { Context, type Effect, type Option } from "effect"
import type { PublishedPage } from "../../schema/marketplace/Page.js"

export class PageStore extends Context.Tag("clark/marketplace/PageStore")<PageStore, {
  /** The page's published revision; drafts are never returned. */
  readonly published: (slug: string) => Effect.Effect<Option.Option<PublishedPage>>
}>() {}
