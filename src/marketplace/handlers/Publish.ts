/** Submissions (scope packages:submit) and a curator's re-index (packages:curate). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { NotFound } from "../../../schema/marketplace/Errors.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import { Submissions } from "../../../services/marketplace/Submissions.js"
import { requireScope } from "./Scopes.js"

export const PublishLive = HttpApiBuilder.group(MarketplaceApi, "publish", (handlers) =>
  Effect.gen(function*() {
    const submissions = yield* Submissions
    const audit = yield* AuditLog
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
      // A curator action, so audited: who asked which package and version to be written anew. After the
      // queue's write rather than in its transaction: the queue's store owns that transaction.
      .handle("reindex", ({ path, payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* requireScope("packages:curate")
          const job = yield* submissions.reindex(path.name, payload.version).pipe(
            Effect.catchTag("PackageNotFound", ({ name }) => Effect.fail(new NotFound({ message: `No package named ${name}` })))
          )
          yield* audit.append({
            actorId: userId,
            action: "curation.reindex",
            targetKind: "package",
            target: path.name,
            before: null,
            after: { version: payload.version ?? null, job: job.id }
          })
          return job
        }))
  }))
