/**
 * The `widgets` group: an instance as the app draws it, its frame, its semantic description and its action
 * presses. Export and the job routes answer 501 NOT_IMPLEMENTED until those land.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { NotImplementedYet } from "../../../services/node/PendingErrors.js"
import { WidgetPresses } from "../../../services/node/WidgetPresses.js"
import { WidgetViews } from "../../../services/node/WidgetViews.js"
import { toNodeError, wire } from "../http/Errors.js"

const notYet = () => Effect.fail(toNodeError(new NotImplementedYet({ feature: "this route" })))

/**
 * The frame is the package's own HTML: the app shows it in a sandboxed frame (`srcdoc`), and this policy keeps
 * it from reaching anything itself when opened directly (docs/decisions.md, "Widget instances").
 */
const frameHeaders = {
  "content-security-policy":
    "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; media-src 'self' blob:; connect-src 'none'; frame-ancestors 'self'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}

export const WidgetsLive = HttpApiBuilder.group(NodeApi, "widgets", (handlers) =>
  Effect.gen(function*() {
    const presses = yield* WidgetPresses
    const views = yield* WidgetViews
    return handlers
      .handle("instance", ({ path }) => wire(views.instance(path.id, path.instanceId)))
      .handle("frame", ({ path }) =>
        wire(views.frame(path.id, path.instanceId)).pipe(
          Effect.map((html) => HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8", headers: frameHeaders }))
        ))
      .handle("publishSemantic", ({ path, payload }) => wire(views.publish(path.id, path.instanceId, payload)))
      .handle("semantic", ({ path }) => wire(views.described(path.id, path.instanceId)))
      .handle("press", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => wire(presses.press(caller, path.id, path.instanceId, payload))))
      .handle("export", notYet)
      .handle("jobs", notYet)
      .handle("job", notYet)
      .handle("cancelJob", notYet)
  }))
