/**
 * POST /conversations/{id}/widgets/{instanceId}/export on the real node: a CSV download (text/csv, named in
 * Content-Disposition) of the rows the table widget's own dataset holds, chosen by sort, query and filters;
 * rows in the request are never used; person only; refusals in the envelope, nothing else answered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { parse } from "content-disposition"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation } from "../../support/NodeFixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ model: "none" }))

const table = {
  columns: [{ key: "harbour", label: "Harbour" }, { key: "low", label: "Low tide" }, { key: "height" }, { key: "internal", hidden: true }],
  rows: [
    { harbour: "Kiel", low: "06:10", height: 0.4, internal: "x" },
    { harbour: "Aarhus", low: "=cmd|' /C calc'!A0", height: 0.9, internal: "y" },
    { harbour: "Bremen, Vegesack", low: "07:45", height: 1.1, internal: "z" }
  ]
}

const placeTable = (conversationId: string, props: unknown = { table }) =>
  Effect.flatMap(TestNode, (node) =>
    Context.get(node.services, WidgetInstances).place({
      conversationId,
      packageId: "@clark-examples/tide-widget",
      version: "1.0.0",
      contentDigest: "sha256:test",
      widgetId: "tide-table",
      props,
      bindings: [],
      offeredActions: [],
      taskId: null
    }))

const exportOf = (id: string, instanceId: string, body: unknown, as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", `/conversations/${id}/widgets/${instanceId}/export`, { body, as }))

describe("table export", () => {
  it.scoped("answers the chosen rows of the widget's own dataset as a named text/csv download", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const widget = yield* placeTable(id)
      const all = yield* exportOf(id, widget.instanceId, {})
      expect(all.status).toBe(200)
      expect(all.headers.get("content-type")).toMatch(/^text\/csv/)
      expect(parse(all.headers.get("content-disposition")!)).toEqual({ type: "attachment", parameters: { filename: "tide-table.csv" } })
      expect(all.body).toBe(
        "Harbour,Low tide,height\r\nKiel,06:10,0.4\r\nAarhus,'=cmd|' /C calc'!A0,0.9\r\n\"Bremen, Vegesack\",07:45,1.1\r\n"
      )

      const chosen = yield* exportOf(id, widget.instanceId, {
        sort: [{ column: "height", direction: "desc" }],
        filters: [{ column: "height", op: "gte", value: 0.5 }],
        columns: ["harbour"],
        // Rows a request carries are not part of the request: never exported.
        rows: [{ harbour: "Injected" }]
      })
      expect(chosen).toMatchObject({ status: 200, body: "Harbour\r\n\"Bremen, Vegesack\"\r\nAarhus\r\n" })
      // The query searches every shown column, also one the file does not carry.
      const queried = yield* exportOf(id, widget.instanceId, { query: "06:", columns: ["height"] })
      expect(queried.body).toBe("height\r\n0.4\r\n")
    })))

  it.scoped("refuses in the envelope: machine surfaces, other conversations, unknown columns, widgets without a table, bad bodies", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const other = yield* conversation
      const widget = yield* placeTable(id)
      const plain = yield* placeTable(id, { harbour: "Kiel" })
      const refused = (status: number, code: string) => ({ status, body: expect.objectContaining({ code, message: expect.any(String) }) })

      expect(yield* exportOf(id, widget.instanceId, {}, "cli-api")).toMatchObject(refused(403, "PERSON_ONLY"))
      expect(yield* exportOf(other, widget.instanceId, {})).toMatchObject(refused(404, "INSTANCE_UNKNOWN"))
      expect(yield* exportOf(id, "wgt_unknown", {})).toMatchObject(refused(404, "INSTANCE_UNKNOWN"))
      expect(yield* exportOf(id, widget.instanceId, { columns: ["internal"] })).toMatchObject(refused(400, "INVALID_INPUT"))
      expect(yield* exportOf(id, widget.instanceId, { sort: [{ column: "nope", direction: "asc" }] })).toMatchObject(
        refused(400, "INVALID_INPUT")
      )
      expect(yield* exportOf(id, plain.instanceId, {})).toMatchObject(refused(400, "INVALID_INPUT"))
      for (const body of [[], "text", { sort: "height" }, { filters: [{ column: "height", op: "like", value: 1 }] }, { query: 5 }]) {
        expect(yield* exportOf(id, widget.instanceId, body)).toMatchObject(refused(400, "INVALID_INPUT"))
      }
      // Malformed JSON is refused before anything is read.
      const raw = yield* Effect.promise(() =>
        fetch(`${node.baseUrl}/conversations/${id}/widgets/${widget.instanceId}/export`, {
          method: "POST",
          headers: { ...node.headers("person"), "content-type": "application/json" },
          body: "{\"sort\": ["
        }).then(async (response) => ({ status: response.status, body: await response.json() })))
      expect(raw).toMatchObject(refused(400, "INVALID_INPUT"))
    })))
})
