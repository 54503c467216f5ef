/**
 * What the widget tests share: the probe service package with a widget added (its bindings call the probe's
 * tools: a read, a write, one whose process dies, one that fails, and an agent binding), placing widgets by a
 * scripted turn, and pressing them through the typed client.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import type { As } from "../../support/NodeServer.js"
import { send, typedClient, wire } from "../../support/NodeFixtures.js"
import { probeCopy, probeId } from "../tools/Fixtures.js"

export { install, ledgerRows, probeId } from "../tools/Fixtures.js"

export const widgetId = "probe-panel"

export const frameHtml = "<!doctype html><html><body><p id=\"probe\">Probe panel</p></body></html>\n"

/** The probe package with a widget facet and the widget `probe-panel`; `perMinute` of the read binding. */
export const widgetProbe = (
  options: { readonly readPerMinute?: number; readonly risks?: Record<string, string> } = {}
) => {
  const folder = probeCopy(options.risks)
  fs.mkdirSync(path.join(folder, "widget"))
  fs.writeFileSync(path.join(folder, "widget/index.html"), frameHtml)
  const file = path.join(folder, "package.json")
  const json = JSON.parse(fs.readFileSync(file, "utf8"))
  json.files = undefined
  json.clark.facets.push({ kind: "widget", isolation: "isolated-ui", renderer: "html", entry: "widget/index.html", widgetId })
  json.clark.widgets = [{
    id: widgetId,
    title: "Probe panel",
    entry: "widget/index.html",
    offeredActions: ["highlight"],
    bindings: [
      { id: "read", kind: "tool", tool: "read_value", perMinute: options.readPerMinute ?? 60 },
      { id: "write", kind: "tool", tool: "write_value", perMinute: 60 },
      { id: "crash", kind: "tool", tool: "crash", perMinute: 60 },
      { id: "fail", kind: "tool", tool: "fail", perMinute: 60 },
      { id: "slow", kind: "tool", tool: "slow", perMinute: 60 },
      { id: "ask", kind: "agent", instruction: "Say what the panel shows.", perMinute: 2 }
    ]
  }]
  fs.writeFileSync(file, JSON.stringify(json, null, 2))
  return folder
}

/** A scripted model that places the probe's widget, or the video player, when asked to. */
export const script: ScriptInput = {
  rules: [
    {
      match: "^place probe",
      steps: [{ tool: { name: "place_widget", input: { package: probeId, widget: widgetId, props: { colour: "blue" } } } }],
      after: [{ delta: "Placed." }]
    },
    {
      match: "^place video",
      steps: [{ tool: { name: "place_widget", input: { widget: "canvas.video@1", props: { title: "Harbour" } } } }],
      after: [{ delta: "Placed." }]
    },
    {
      match: "^place nothing",
      steps: [{ tool: { name: "place_widget", input: { package: "@nobody/none", widget: "x" } } }],
      after: [{ delta: "Could not." }]
    },
    { match: "Say what the panel shows", steps: [], after: [{ delta: "The panel shows blue." }] }
  ]
}

/** The tool block of the placing turn's reply. */
export const placedBlock = (body: any) => {
  const reply = body.timeline.entries.find((entry: any) => entry.role === "assistant")
  return reply.blocks.find((block: any) => block.type === "tool" && block.name === "place_widget")
}

/** Places by a turn in `conversationId`; answers the tool's output (instanceId, revision, bindings). */
export const place = (conversationId: string, text = "place probe") =>
  Effect.map(send(conversationId, { text }), ({ body }) => placedBlock(body).output)

/** A press through the typed client, as status and body. */
export const press = (
  conversationId: string,
  instanceId: string,
  payload: {
    readonly actionBindingId: string
    readonly expectedRevision: number
    readonly expectedBindingDigest: string
    readonly input: unknown
    readonly invocationId: string
    readonly variant?: string
    readonly sequence?: number
  },
  as: As = "person"
) =>
  Effect.flatMap(typedClient(as), (client) =>
    Effect.orDie(wire(client.widgets.press({ path: { id: conversationId, instanceId }, payload, withResponse: true }))))

/** The press payload of a binding of a placed instance at its current revision. */
export const pressOf = (placed: any, bindingId: string, input: unknown, invocationId: string, revision?: number) => ({
  actionBindingId: bindingId,
  expectedRevision: revision ?? placed.revision,
  expectedBindingDigest: placed.bindings.find((b: any) => b.id === bindingId).digest,
  input,
  invocationId
})
