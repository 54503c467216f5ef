/**
 * A node killed with SIGKILL while a package tool's call with an effect is out: the effect was written before
 * the call went, so the next start finds it, makes it unknown and asks the person about it; the task never
 * tries the action again by itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import { exited, spawnNode } from "../../support/NodeProcess.js"
import * as NodeServer from "../../support/NodeServer.js"
import { eventually, query, typedClient } from "../../support/NodeFixtures.js"
import { ledgerRows, probeCopy, probeId } from "./Fixtures.js"

const script: ScriptInput = {
  rules: [{ match: "^slow write", steps: [{ tool: { name: "probe-service__slow", input: { millis: 60_000 } } }], after: [{ delta: "Done." }] }]
}

describe("a node killed during a call", () => {
  it.scoped("leaves the call's effect unknown, with its notice, when the node starts again", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const node = yield* spawnNode({ dataDir, script })
      const listing = yield* node.fetchJson("POST", "/packages/local", { path: probeCopy({ slow: "local-write" }) })
      expect(listing.status).toBe(201)
      const install = yield* node.fetchJson("POST", "/packages/install", { packageId: probeId, localDigest: listing.body.contentDigest })
      if (install.status === 202) {
        const approval = yield* node.fetchJson("GET", `/packages/approvals/${install.body.approvalId}`)
        const granted = yield* node.fetchJson("POST", `/packages/approvals/${install.body.approvalId}/decision`, {
          decision: "granted",
          digest: approval.body.operationDigest
        })
        expect(granted.status).toBe(200)
      } else {
        expect(install.status).toBe(200)
      }
      const created = yield* node.fetchJson("POST", "/conversations", {})
      const id = created.body.conversationId as string
      // The waiting route answers only when the turn ends; the node dies first.
      const controller = new AbortController()
      fetch(`${node.baseUrl}/conversations/${id}/messages`, {
        method: "POST",
        headers: node.headers,
        body: JSON.stringify({ text: "slow write" }),
        signal: controller.signal
      }).catch(() => undefined)
      const [sent] = yield* eventually(
        Effect.sync(() => ledgerRows(dataDir)),
        (rows) => rows.length === 1,
        "the effect is written before the call goes",
        1500
      )
      expect(sent).toMatchObject({ tool: "slow", status: "sent" })
      node.child.kill("SIGKILL")
      yield* Effect.promise(() => exited(node.child))
      controller.abort()

      yield* Effect.gen(function*() {
        const [effect] = ledgerRows(dataDir)
        expect(effect).toMatchObject({ id: sent.id, status: "unknown", may_have_run: 1, reason: "interrupted-by-restart" })
        expect(query(dataDir, "SELECT subject_id FROM notices WHERE kind = 'unknown-effect'")).toEqual([{ subject_id: sent.id }])
        const client = yield* typedClient("person")
        const { work } = yield* Effect.orDie(client.work.list({ urlParams: {} }))
        expect(work).toMatchObject([{ taskId: sent.task_id, status: "waiting", waitingFor: { kind: "unknown-effect", effectId: sent.id } }])
        const answered = yield* Effect.orDie(client.work.reconcile({ path: { effectId: sent.id }, payload: { outcome: "confirmed" } }))
        expect(answered).toMatchObject({ effectId: sent.id, outcome: "confirmed", taskId: sent.task_id })
        // Nothing tried the action again: still one effect.
        expect(ledgerRows(dataDir)).toHaveLength(1)
      }).pipe(Effect.provide(NodeServer.layer({ script, dataDir })))
    }), { timeout: 60_000 })
})
