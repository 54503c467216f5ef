import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotFound } from "../../../schema/marketplace/Errors.js"
import { renderPageMarkdown } from "../../../services/marketplace/PageMarkdown.js"
import { PageStore } from "../../../services/marketplace/PageStore.js"

export const PagesLive = HttpApiBuilder.group(MarketplaceApi, "pages", (handlers) =>
  Effect.gen(function*() {
    const store = yield* PageStore
    return handlers.handle("page", ({ path, urlParams }) =>
      store.published(path.slug).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `No published page ${path.slug}` })),
          onSome: (page) => Effect.succeed(urlParams.format === "md" ? renderPageMarkdown(page) : page)
        }))
      ))
  }))
