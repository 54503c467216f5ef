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
      // AUDIT: a curator action. The audit log is built on another branch (issue 17, point 6); this is where the
      // re-index (who, which package and version, when) is to be recorded once it exists.
      .handle("reindex", ({ path, payload }) =>
        Effect.zipRight(
          requireScope("packages:curate"),
          submissions.reindex(path.name, payload.version).pipe(
            Effect.catchTag("PackageNotFound", ({ name }) => Effect.fail(new NotFound({ message: `No package named ${name}` })))
          )
        ))
  }))
