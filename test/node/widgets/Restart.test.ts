/**
 * Press rule 6 across a restart, with the node as its own process killed by SIGKILL: an answered press is
 * answered again from the store, a press cut off in the middle answers ACTION_INTERRUPTED, and its call's
 * effect (written before it went) is unknown, never sent again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { exited, spawnNode } from "../../support/NodeProcess.js"
import * as NodeServer from "../../support/NodeServer.js"
import { eventually, query } from "../../support/NodeFixtures.js"
import { ledgerRows, pressOf, probeId, script, widgetProbe } from "./Fixtures.js"
import { press } from "./Fixtures.js"

describe("a node killed during a press", () => {
  it.scoped("answers the answered press again, and the cut-off one ACTION_INTERRUPTED, after it starts again", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const node = yield* spawnNode({ dataDir, script })
      const listing = yield* node.fetchJson("POST", "/packages/local", { path: widgetProbe({ risks: { slow: "local-write" } }) })
      expect(listing.status).toBe(201)
      const install = yield* node.fetchJson("POST", "/packages/install", { packageId: probeId, localDigest: listing.body.contentDigest })
      if (install.status === 202) {
        const approval = yield* node.fetchJson("GET", `/packages/approvals/${install.body.approvalId}`)
        const granted = yield* node.fetchJson("POST", `/packages/approvals/${install.body.approvalId}/decision`, {
          decision: "granted",
          digest: approval.body.operationDigest
        })
        expect(granted.status).toBe(200)
      }
      const id = (yield* node.fetchJson("POST", "/conversations", {})).body.conversationId as string
      const placedTurn = yield* node.fetchJson("POST", `/conversations/${id}/messages`, { text: "place probe" })
      const reply = placedTurn.body.timeline.entries.find((e: any) => e.role === "assistant")
      const placed = reply.blocks.find((b: any) => b.name === "place_widget").output
      const actions = `/conversations/${id}/widgets/${placed.instanceId}/actions`
      const done = yield* node.fetchJson("POST", actions, pressOf(placed, "write", { key: "k", value: "v" }, "before"))
      expect(done.status).toBe(200)
      const controller = new AbortController()
      fetch(`${node.baseUrl}${actions}`, {
        method: "POST",
        headers: node.headers,
        body: JSON.stringify(pressOf(placed, "slow", { millis: 60_000 }, "cut-off", done.body.revision)),
        signal: controller.signal
      }).catch(() => undefined)
      const [, sent] = yield* eventually(
        Effect.sync(() => ledgerRows(dataDir)),
        (rows) => rows.length === 2,
        "the slow call's effect is written before it goes",
        1500
      )
      expect(sent).toMatchObject({ tool: "slow", status: "sent" })
      node.child.kill("SIGKILL")
      yield* Effect.promise(() => exited(node.child))
      controller.abort()

      yield* Effect.gen(function*() {
        const again = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "k", value: "v" }, "before"))
        expect(again).toEqual({ status: 200, body: done.body })
        const cut = yield* press(id, placed.instanceId, pressOf(placed, "slow", { millis: 1 }, "cut-off", done.body.revision))
        expect(cut).toMatchObject({
          status: 409,
          body: { code: "ACTION_INTERRUPTED", outcome: "uncertain", mayHaveRun: true }
        })
        // Its effect is unknown and asked about; nothing was sent again.
        const effects = ledgerRows(dataDir)
        expect(effects).toHaveLength(2)
        expect(effects[1]).toMatchObject({ id: sent.id, status: "unknown", reason: "interrupted-by-restart" })
        expect(query(dataDir, "SELECT subject_id FROM notices WHERE kind = 'unknown-effect'")).toEqual([{ subject_id: sent.id }])
        // The answered press's call and the press are audited once each; the cut-off one left no row of either
        // (both are written in the unit that stores its answer).
        const audited = query(dataDir, "SELECT kind, detail FROM audit_log WHERE kind IN ('tool-call', 'widget-press') ORDER BY id")
        expect(audited.map((row) => [row.kind, JSON.parse(row.detail).taskId ?? JSON.parse(row.detail).invocationId])).toEqual([
          ["tool-call", done.body.taskId],
          ["widget-press", "before"]
        ])
      }).pipe(Effect.provide(NodeServer.layer({ script, dataDir })))
    }), { timeout: 90_000 })
})
