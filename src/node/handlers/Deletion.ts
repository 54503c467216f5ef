/** The `deletion` group: a conversation's deletion in three steps (services/node/Deletions.ts). */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { Deletions } from "../../../services/node/Deletions.js"
import { wire } from "../http/Errors.js"

export const DeletionLive = HttpApiBuilder.group(NodeApi, "deletion", (handlers) =>
  Effect.gen(function*() {
    const deletions = yield* Deletions
    return handlers
      .handle("delete", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          if (payload.deletionPermit !== undefined) return yield* deletions.delete(path.id, payload.deletionPermit, caller)
          // The 202 is its own response: the group's encoder would answer the first success status.
          const asked = yield* deletions.request(path.id, caller)
          return HttpServerResponse.unsafeJson(asked, { status: 202 })
        }).pipe(wire))
      .handle("confirm", ({ payload }) =>
        wire(Effect.flatMap(CurrentCaller, (caller) => deletions.confirm(payload.confirmationToken, payload.decision, caller))))
  }))
