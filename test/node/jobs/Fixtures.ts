/**
 * What the job tests share: the probe service package with some tools declared as jobs, a widget of it placed
 * in a conversation (through the node's own instance store: the press that places and presses it is the widget
 * work's), a job started the way the press starts one, and the job routes through the typed client.
 */
import { Context, Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Jobs } from "../../../services/node/Jobs.js"
import { type WidgetInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { type As, TestNode } from "../../support/NodeServer.js"
import { eventually, typedClient, wire } from "../../support/NodeFixtures.js"
import { probeCopy, probeId } from "../tools/Fixtures.js"

export { probeId }

/** Tools of the probe declared `execution: {kind: job, version: 1}`. */
export const jobTools = ["slow", "fail", "progress"]

/** A copy of the probe package whose job tools are declared as jobs. */
export const jobProbe = () => {
  const folder = probeCopy()
  const file = path.join(folder, "package.json")
  const json = JSON.parse(fs.readFileSync(file, "utf8"))
  for (const tool of json.clark.tools) if (jobTools.includes(tool.name)) tool.execution = { kind: "job", version: 1 }
  fs.writeFileSync(file, JSON.stringify(json, null, 2))
  return folder
}

/** A widget of the probe in the conversation, with one button per named tool. */
export const place = (conversationId: string, options: { tools?: ReadonlyArray<string>; version?: string } = {}) =>
  Effect.flatMap(TestNode, (node) =>
    Context.get(node.services, WidgetInstances).place({
      conversationId,
      packageId: probeId,
      version: options.version ?? "1.0.0",
      contentDigest: "sha256:test",
      widgetId: "probe-panel",
      props: {},
      bindings: (options.tools ?? jobTools).map((tool) => ({ id: `run-${tool}`, kind: "tool" as const, tool, perMinute: 6 })),
      offeredActions: [],
      taskId: null
    }))

/** Starts a job as a press of the widget's button does once its checks passed. */
export const start = (widget: WidgetInstance, tool: string, input: Record<string, unknown> = {}) =>
  Effect.flatMap(TestNode, (node) =>
    Context.get(node.services, Jobs).start({
      conversationId: widget.conversationId,
      instanceId: widget.instanceId,
      bindingId: `run-${tool}`,
      packageId: widget.packageId,
      version: widget.version,
      tool,
      input,
      origin: "person"
    }))

export const jobsService = Effect.map(TestNode, (node) => Context.get(node.services, Jobs))

type Where = { readonly id: string; readonly instanceId: string }

export const getJob = (where: Where, jobId: string, as: As = "person") =>
  Effect.flatMap(typedClient(as), (client) =>
    Effect.orDie(wire(client.widgets.job({ path: { ...where, jobId }, withResponse: true }))))

export const listJobs = (where: Where, as: As = "person") =>
  Effect.flatMap(typedClient(as), (client) => Effect.orDie(wire(client.widgets.jobs({ path: where, withResponse: true }))))

export const cancelJob = (where: Where, jobId: string, as: As = "person") =>
  Effect.flatMap(typedClient(as), (client) =>
    Effect.orDie(wire(client.widgets.cancelJob({ path: { ...where, jobId }, withResponse: true }))))

export const whereOf = (widget: WidgetInstance): Where => ({ id: widget.conversationId, instanceId: widget.instanceId })

/** Polls the job route (real time: the service runs in its own process) until the job's status is one of `statuses`. */
export const jobUntil = (widget: WidgetInstance, jobId: string, ...statuses: ReadonlyArray<string>) =>
  Effect.map(
    eventually(getJob(whereOf(widget), jobId), (r) => r.status === 200 && statuses.includes(r.body.job.status), `job ${statuses.join("/")}`, 3000),
    (r) => r.body.job
  )
