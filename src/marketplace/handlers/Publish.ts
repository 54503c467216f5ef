/** Submissions (scope packages:submit) and a curator's re-index (packages:curate). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotFound } from "../../../schema/marketplace/Errors.js"
import { Submissions } from "../../../services/marketplace/Submissions.js"
import { requireScope } from "./Scopes.js"

export const PublishLive = HttpApiBuilder.group(MarketplaceApi, "publish", (handlers) =>
  Effect.gen(function*() {
    const submissions = yield* Submissions
    const submitter = requireScope("packages:submit")
    return handlers
      .handle("submit", ({ payload }) =>
        Effect.flatMap(submitter, ({ userId }) => submissions.submit(userId, payload)))
      .handle("submissions", () =>
        Effect.flatMap(submitter, ({ userId }) => Effect.map(submissions.listMine(userId), (items) => ({ items }))))
      .handle("submission", ({ path }) =>
        Effect.flatMap(submitter, ({ userId }) =>
          submissions.get(userId, path.id).pipe(
            Effect.catchTag("SubmissionNotFound", ({ id }) => Effect.fail(new NotFound({ message: `No submission ${id}` })))
          )))
      // A curator action: audited (`curation.reindex`) with the queueing, in one transaction.
      .handle("reindex", ({ path, payload }) =>
        Effect.flatMap(requireScope("packages:curate"), ({ userId }) =>
          submissions.reindex(path.name, payload.version, userId).pipe(
            Effect.catchTag("PackageNotFound", ({ name }) => Effect.fail(new NotFound({ message: `No package named ${name}` })))
          )))
  }))
