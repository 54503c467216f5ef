/**
 * The widget routes of jobs and table export (spec, "Widget routes"): GET …/jobs, GET and POST …/jobs/{jobId}
 * and POST …/export: handler functions the `widgets` group (src/node/handlers/Widgets.ts) takes as they are.
 */
import { HttpServerResponse } from "@effect/platform"
import { create as contentDisposition } from "content-disposition"
import { Effect, Either, Option } from "effect"
import type { WidgetPath } from "../../../schema/node/Instance.js"
import type { ExportRequest } from "../../../schema/node/Widget.js"
import { type JobViewer, Jobs, WidgetNotHere } from "../../../services/node/Jobs.js"
import { datasetOf, exportRows, csvFileName, refusalOf, toCsv } from "../../../services/node/TableExport.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { wire } from "../http/Errors.js"

/** The widget named by the path, only in its own conversation, as the jobs see it: its buttons' capabilities. */
export const widgetOf = (path: WidgetPath) =>
  Effect.gen(function*() {
    const instances = yield* WidgetInstances
    const found = yield* instances.get(path.id, path.instanceId)
    if (Option.isNone(found)) return yield* new WidgetNotHere({ instanceId: path.instanceId })
    const instance = found.value
    const viewer: JobViewer = {
      conversationId: instance.conversationId,
      instanceId: instance.instanceId,
      packageId: instance.packageId,
      version: instance.version,
      tools: instance.bindings.flatMap((binding) => (binding.kind === "tool" ? [binding.tool] : []))
    }
    return { instance, viewer }
  })

export const listJobs = ({ path }: { readonly path: WidgetPath }) =>
  Effect.gen(function*() {
    const { viewer } = yield* widgetOf(path)
    return { jobs: yield* Effect.flatMap(Jobs, (jobs) => jobs.list(viewer)) }
  }).pipe(wire)

export const getJob = ({ path }: { readonly path: WidgetPath & { readonly jobId: string } }) =>
  Effect.gen(function*() {
    const { viewer } = yield* widgetOf(path)
    return { job: yield* Effect.flatMap(Jobs, (jobs) => jobs.get(viewer, path.jobId)) }
  }).pipe(wire)

export const cancelJob = ({ path }: { readonly path: WidgetPath & { readonly jobId: string } }) =>
  Effect.gen(function*() {
    const { viewer } = yield* widgetOf(path)
    return yield* Effect.flatMap(Jobs, (jobs) => jobs.cancel(viewer, path.jobId))
  }).pipe(wire)

/** PersonOnly already refused machine surfaces; the owner is the person whose conversation holds the widget. */
export const exportTable = ({ path, payload }: { readonly path: WidgetPath; readonly payload: ExportRequest }) =>
  Effect.gen(function*() {
    const { instance } = yield* widgetOf(path)
    const table = Either.flatMap(datasetOf(instance.props), (dataset) => exportRows(dataset, payload))
    if (Either.isLeft(table)) return yield* refusalOf(table.left)
    return HttpServerResponse.text(toCsv(table.right), {
      contentType: "text/csv; charset=utf-8",
      headers: {
        "content-disposition": contentDisposition(csvFileName(instance.widgetId)),
        "x-content-type-options": "nosniff",
        "cache-control": "no-store"
      }
    })
  }).pipe(wire)
