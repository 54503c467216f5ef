/**
 * Placing widgets by a scripted turn on the real node: the instance in the timeline with its revision and binding
 * digests, GET of the instance, its frame from the package cache, 404 INSTANCE_UNKNOWN in another conversation,
 * and 409 NOT_INSTALLED once the listing changed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, send, typedClient, wire } from "../../support/NodeFixtures.js"
import { frameHtml, install, place, placedBlock, probeId, script, widgetId, widgetProbe } from "./Fixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

describe("placing a widget", () => {
  it.scoped("a turn places the package's widget: the tool block carries its id, revision and binding digests", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(widgetProbe())
      const id = yield* conversation
      const placed = yield* place(id)
      expect(placed).toMatchObject({ placed: true, packageId: probeId, widgetId, revision: 1, offeredActions: ["highlight"] })
      expect(placed.instanceId).toMatch(/^wgt_/)
      expect(placed.bindings.map((b: any) => [b.id, b.kind])).toEqual([
        ["read", "tool"],
        ["write", "tool"],
        ["crash", "tool"],
        ["fail", "tool"],
        ["slow", "tool"],
        ["ask", "agent"]
      ])
      for (const binding of placed.bindings) expect(binding.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      // The timeline keeps it as stored.
      const timeline = yield* node.request("GET", `/conversations/${id}/timeline`)
      expect(placedBlock({ timeline: timeline.body }).output).toEqual(placed)

      const client = yield* typedClient("cli-api")
      const view = yield* client.widgets.instance({ path: { id, instanceId: placed.instanceId } })
      expect(view).toMatchObject({
        instanceId: placed.instanceId,
        conversationId: id,
        packageId: probeId,
        version: "1.0.0",
        widgetId,
        kind: "package",
        title: "Probe panel",
        appearanceMode: "adaptive",
        props: { colour: "blue" },
        revision: 1,
        offeredActions: ["highlight"],
        viewState: null
      })
      expect(view.bindings.map((b) => b.digest)).toEqual(placed.bindings.map((b: any) => b.digest))
      expect(view.contentDigest).toMatch(/^sha256:/)

      const frame = yield* node.request("GET", `/conversations/${id}/widgets/${placed.instanceId}/frame`, { as: "cli-api" })
      expect(frame.status).toBe(200)
      expect(frame.body).toBe(frameHtml)
      expect(frame.headers.get("content-type")).toMatch(/^text\/html/)
      expect(frame.headers.get("content-security-policy")).toMatch(/sandbox allow-scripts/)
      expect(frame.headers.get("x-content-type-options")).toBe("nosniff")
    })))

  it.scoped("another conversation's widget, or none, is 404 INSTANCE_UNKNOWN on every widget route", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(widgetProbe())
      const id = yield* conversation
      const other = yield* conversation
      const placed = yield* place(id)
      for (const [conversationId, instanceId] of [[other, placed.instanceId], [id, "wgt_nothing"]]) {
        for (const [method, suffix, body] of [
          ["GET", "", undefined],
          ["GET", "/frame", undefined],
          ["GET", "/semantic", undefined],
          ["PUT", "/semantic", { publishRevision: 1, summary: "x", selectedIds: [] }],
          ["POST", "/actions", {
            actionBindingId: "read",
            expectedRevision: 1,
            expectedBindingDigest: placed.bindings[0].digest,
            input: { key: "k" },
            invocationId: "i-1"
          }]
        ] as const) {
          const response = yield* node.request(method, `/conversations/${conversationId}/widgets/${instanceId}${suffix}`, { body })
          expect({ suffix, status: response.status, code: response.body.code }).toEqual({
            suffix,
            status: 404,
            code: "INSTANCE_UNKNOWN"
          })
        }
      }
    })))

  it.scoped("a package that is not installed is not placed: the model reads why", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const { body } = yield* send(id, { text: "place nothing" })
      expect(placedBlock(body)).toMatchObject({ status: "failed", output: { error: "RESOURCE_NOT_FOUND" } })
    })))

  it.scoped("the video player is placed without a package and has no frame", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const placed = yield* place(id, "place video")
      expect(placed).toMatchObject({ widgetId: "canvas.video@1", revision: 1, bindings: [{ id: "view-state", kind: "view-state" }] })
      const client = yield* typedClient()
      const view = yield* client.widgets.instance({ path: { id, instanceId: placed.instanceId } })
      expect(view).toMatchObject({ kind: "host", title: "Video player", props: { title: "Harbour" }, viewState: null })
      const frame = yield* node.request("GET", `/conversations/${id}/widgets/${placed.instanceId}/frame`)
      expect([frame.status, frame.body.code]).toEqual([400, "UNSUPPORTED_ACTION"])
    })))

  it.scoped("once the listed folder changed, the instance and its frame answer 409 NOT_INSTALLED until it is listed as installed again", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const folder = widgetProbe()
      yield* install(folder)
      const id = yield* conversation
      const placed = yield* place(id)
      fs.writeFileSync(path.join(folder, "widget/index.html"), "<p>changed</p>")
      const client = yield* typedClient()
      const view = yield* Effect.orDie(wire(client.widgets.instance({ path: { id, instanceId: placed.instanceId }, withResponse: true })))
      expect([view.status, view.body.code]).toEqual([409, "NOT_INSTALLED"])
      const frame = yield* node.request("GET", `/conversations/${id}/widgets/${placed.instanceId}/frame`)
      expect([frame.status, frame.body.code]).toEqual([409, "NOT_INSTALLED"])
      // Putting the listed files back brings the widget back: it kept its state.
      fs.writeFileSync(path.join(folder, "widget/index.html"), frameHtml)
      const again = yield* client.widgets.instance({ path: { id, instanceId: placed.instanceId } })
      expect(again.props).toEqual({ colour: "blue" })
    })))
})
