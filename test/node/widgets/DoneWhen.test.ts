/**
 * Issue 15's "Done when", through the real node: the example tide widget package (its widget and its MCP service,
 * examples/packages/tide-widget, run in its own process) installed from its folder; a scripted turn places the
 * widget with its table; a press of its read binding answers `done` with the service's result; the widget writes
 * and finalizes a file through the artifact routes; a press of its job binding runs `tide_report` as a background
 * job to completion (polled through GET …/jobs/{jobId}), whose CSV result file is stored and read back, told to
 * the conversation and the inbox; and the table is exported as CSV.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as path from "node:path"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, query, timeline, typedClient, wire } from "../../support/NodeFixtures.js"
import { inbox } from "../inbox/Support.js"
import { install, place, press, pressOf } from "./Fixtures.js"

const tideId = "@clark-examples/tide-widget"
const folder = path.resolve("examples/packages/tide-widget")

const table = {
  columns: [{ key: "time", label: "Time" }, { key: "height", label: "Height (m)" }, { key: "kind", label: "Kind" }, { key: "note", hidden: true }],
  rows: [
    { time: "06:10", height: 0.4, kind: "low", note: "walk" },
    { time: "12:22", height: 1.9, kind: "high", note: "" },
    { time: "18:35", height: 0.5, kind: "low", note: "=1+1" }
  ]
}

const script: ScriptInput = {
  rules: [{
    match: "^place tides",
    steps: [{ tool: { name: "place_widget", input: { package: tideId, widget: "tide-table", props: { harbour: "Kiel", table } } } }],
    after: [{ delta: "Here are the tides." }]
  }]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")

describe("issue 15, done when", () => {
  it.scoped("the example widget is placed by a turn, pressed, writes a file, runs a job to completion and exports its table", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      expect(yield* install(folder)).toBe(tideId)
      const id = yield* conversation

      // Placed by a scripted turn.
      const placed = yield* place(id, "place tides")
      expect(placed).toMatchObject({ placed: true, packageId: tideId, widgetId: "tide-table", revision: 1 })
      expect(placed.bindings.map((b: any) => [b.id, b.kind])).toEqual([["refresh", "tool"], ["report", "tool"], ["ask-low-tide", "agent"]])
      const w = { id, instanceId: placed.instanceId as string }

      // Pressed: the read binding calls the service's tide_table and answers done with its result.
      const refreshed = yield* press(id, w.instanceId, pressOf(placed, "refresh", { harbour: "Kiel", days: 1 }, "inv-refresh-1"))
      expect(refreshed.status).toBe(200)
      expect(refreshed.body).toMatchObject({ outcome: "done", invocationId: "inv-refresh-1", instanceId: w.instanceId, revision: 2 })
      expect(refreshed.body.result).toEqual({
        text: "day 1 00:47 high 1.8 m\nday 1 06:10 low 0.4 m\nday 1 12:22 high 1.9 m\nday 1 18:35 low 0.5 m",
        structuredContent: {
          harbour: "Kiel",
          rows: [
            { day: 1, time: "00:47", height: 1.8, kind: "high" },
            { day: 1, time: "06:10", height: 0.4, kind: "low" },
            { day: 1, time: "12:22", height: 1.9, kind: "high" },
            { day: 1, time: "18:35", height: 0.5, kind: "low" }
          ]
        }
      })
      // The same invocation id again: the stored answer, nothing sent twice, the revision unchanged.
      const repeated = yield* press(id, w.instanceId, pressOf(placed, "refresh", { harbour: "Kiel", days: 1 }, "inv-refresh-1"))
      expect(repeated).toEqual(refreshed)
      expect(query(node.dataDir, "SELECT revision FROM widget_instances WHERE id = ?", w.instanceId)).toEqual([{ revision: 2 }])

      // Writes and finalizes a file.
      const notes = "Low tide at 06:10: a walk to the sandbank.\n"
      const created = yield* wire(client.widgetArtifacts.create({ path: w, payload: { mimeType: "text/plain", name: "walk" }, withResponse: true }))
      expect(created).toMatchObject({ status: 201, body: { artifactRef: { kind: "widget", mimeType: "text/plain", name: "walk.txt", sizeBytes: 0 } } })
      const artifactId = created.body.artifactRef.artifactId as string
      const chunk = yield* wire(client.widgetArtifacts.writeChunk({
        path: { ...w, artifactId },
        payload: { offset: 0, contentBase64: new TextEncoder().encode(notes) },
        withResponse: true
      }))
      expect(chunk.body.artifactRef.sizeBytes).toBe(Buffer.byteLength(notes))
      const finalized = yield* wire(client.widgetArtifacts.finalize({ path: { ...w, artifactId }, withResponse: true }))
      expect(finalized).toMatchObject({ status: 200, body: { artifactRef: { artifactId, digest: expect.stringMatching(/^sha256:/) } } })
      const readBack = yield* wire(client.widgetArtifacts.read({ path: { ...w, artifactId }, urlParams: {}, withResponse: true }))
      expect(readBack.body).toMatchObject({ offset: 0, eof: true, contentBase64: b64(notes) })

      // Runs a job to completion: the press answers its job reference at once.
      const reported = yield* press(id, w.instanceId, pressOf(placed, "report", { harbour: "Kiel", days: 2 }, "inv-report-1", 2))
      expect(reported.status).toBe(200)
      expect(reported.body).toMatchObject({ outcome: "done", revision: 3, job: expect.stringMatching(/^job_/) })
      const jobId = reported.body.job as string
      const job = yield* eventually(
        Effect.orDie(wire(client.widgets.job({ path: { ...w, jobId }, withResponse: true }))),
        (r) => r.status === 200 && ["completed", "failed", "cancelled"].includes(r.body.job.status),
        "the report job ended",
        1000
      )
      expect(job.body.job).toMatchObject({
        jobId,
        status: "completed",
        output: { harbour: "Kiel", tides: 8, file: "tides-kiel.csv" },
        resultRefs: [{ kind: "job", mimeType: "text/csv", name: "tides-kiel.csv" }]
      })
      const resultId = job.body.job.resultRefs[0].artifactId as string
      const csv = yield* Effect.promise(async () => {
        const response = await fetch(`${node.baseUrl}/artifacts/${resultId}/content`, { headers: node.headers("person") })
        return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
      })
      expect(csv.status).toBe(200)
      expect(csv.type).toMatch(/^text\/csv/)
      expect(csv.text.split("\r\n").slice(0, 3)).toEqual(["day,time,height,kind", "1,00:47,1.8,high", "1,06:10,0.4,low"])
      expect(csv.text.trimEnd().split("\r\n")).toHaveLength(9)
      // The conversation and the inbox say so, naming the result file.
      const said = (yield* timeline(id)).filter((entry: any) => entry.hostWritten?.kind === "job-ended")
      expect(said.map((entry: any) => entry.blocks)).toEqual([[{
        type: "text",
        text: "The background job tide_report finished. Result files: tides-kiel.csv."
      }]])
      const notice = (yield* inbox()).notices.find((n) => n.kind === "job-ended" && n.conversationId === id)
      expect(notice).toMatchObject({ title: "A background job finished", body: said[0].blocks[0].text })

      // Exports its table as CSV: its own dataset, the hidden column left out, a formula-like cell defused.
      const exported = yield* node.request("POST", `/conversations/${id}/widgets/${w.instanceId}/export`, { body: {} })
      expect(exported.status).toBe(200)
      expect(exported.headers.get("content-type")).toMatch(/^text\/csv/)
      expect(exported.headers.get("content-disposition")).toContain("tide-table.csv")
      expect(exported.body).toBe("Time,Height (m),Kind\r\n06:10,0.4,low\r\n12:22,1.9,high\r\n18:35,0.5,low\r\n")
    })))
})
