/**
 * The `inbox` group: GET /inbox, the one notice action route, skip-version / unskip-version and the removal of a
 * skipped version. The action's name is read from the raw request URL: the router hands handlers decoded
 * parameters, and the spec wants `%64ismiss` refused, not taken as `dismiss`.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { Inbox } from "../../../services/node/Inbox.js"
import { rawActionOf } from "../../../services/node/Notices.js"
import { wire } from "../http/Errors.js"

export const InboxLive = HttpApiBuilder.group(NodeApi, "inbox", (handlers) =>
  Effect.gen(function*() {
    const inbox = yield* Inbox

    return handlers
      // The page is built by typed code from decoded rows; encoding it again through the schema cost more than the
      // rest of the request (docs/decisions.md, "Inbox and background work"), so it goes out as JSON at once.
      .handle("inbox", ({ urlParams }) =>
        Effect.map(inbox.read({ limit: urlParams.limit ?? 100, before: urlParams.before }), (page) =>
          HttpServerResponse.unsafeJson(page)))
      .handle("noticeAction", ({ path, payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const outcome = yield* inbox.act(path.id, rawActionOf(request.url), payload, yield* CurrentCaller)
          return outcome._tag === "Done" ? outcome.body : HttpServerResponse.unsafeJson(outcome.body, { status: 202 })
        }).pipe(wire))
      .handle("skipVersion", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => inbox.skipVersion(path.id, true, caller)).pipe(wire))
      .handle("unskipVersion", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => inbox.skipVersion(path.id, false, caller)).pipe(wire))
      .handle("removeSkippedVersion", ({ path }) =>
        Effect.flatMap(CurrentCaller, (caller) => inbox.removeSkipped(path, caller)).pipe(wire))
  }))
