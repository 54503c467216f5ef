/**
 * The `widgets` group: an instance as the app draws it, its frame, its semantic description and its action
 * presses; the job and table-export routes are WidgetJobs.ts's handlers.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { type PressAnswer, WidgetPresses } from "../../../services/node/WidgetPresses.js"
import { WidgetViews } from "../../../services/node/WidgetViews.js"
import { wire } from "../http/Errors.js"
import { cancelJob, exportTable, getJob, listJobs } from "./WidgetJobs.js"

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

/** 202 for an answer that waits (an approval card) or goes on in the background; 200 for the rest. */
const pressStatus = (answer: PressAnswer) =>
  "outcome" in answer && (answer.outcome === "approval-required" || answer.outcome === "background") ? 202 : 200

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
      // Sent as built, without the schema's encode step (as GET /inbox): every answer is typed plain JSON (a stored
      // one was stored as sent), and encoding the four-member union was a visible share of a press's cost.
      .handle("press", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => wire(presses.press(caller, path.id, path.instanceId, payload))).pipe(
          Effect.map((answer) => HttpServerResponse.unsafeJson(answer, { status: pressStatus(answer) }))
        ))
      .handle("export", exportTable)
      .handle("jobs", listJobs)
      .handle("job", getJob)
      .handle("cancelJob", cancelJob)
  }))
