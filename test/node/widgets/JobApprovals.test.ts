/**
 * A job press the execution mode asks about, on the real node (spec, "Long-running package jobs": "When the
 * execution mode asks, an approval card comes first and the job starts after approval"): 202 with the card, the
 * same card for the same press, the job started by the grant only, nothing by a denial, a deny rule 403.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, query, typedClient, wire } from "../../support/NodeFixtures.js"
import { setPreference } from "../tools/Fixtures.js"
import { install, place, probeId, widgetProbe } from "./Fixtures.js"
import { askMode, decide, withNode } from "./OfferedFixtures.js"

describe("a job press the execution mode asks about", () => {
  it.scoped("answers 202 approval-required with the card; the job starts only after the grant, once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const folder = widgetProbe()
      const file = `${folder}/package.json`
      const json = JSON.parse(fs.readFileSync(file, "utf8"))
      json.clark.tools.find((t: any) => t.name === "reindex").risk = "external-write"
      fs.writeFileSync(file, JSON.stringify(json, null, 2))
      yield* install(folder)
      const id = yield* conversation
      const placed = yield* place(id)
      yield* askMode
      const client = yield* typedClient("cli-api")
      const pressAs = (invocationId: string, revision: number) =>
        Effect.orDie(wire(client.widgets.press({
          path: { id, instanceId: placed.instanceId },
          payload: {
            actionBindingId: "reindex",
            expectedRevision: revision,
            expectedBindingDigest: placed.bindings.find((b: any) => b.id === "reindex").digest,
            input: {},
            invocationId
          },
          withResponse: true
        })))
      const asked = yield* pressAs("jr-1", 1)
      expect(asked).toMatchObject({
        status: 202,
        body: { outcome: "approval-required", invocationId: "jr-1", approvalRequired: { approvalId: expect.stringMatching(/^tap_/) } }
      })
      const approvalId = asked.body.approvalRequired.approvalId
      expect(query(node.dataDir, "SELECT id FROM jobs")).toEqual([])
      // The same press again (another invocation) while the card waits gets the same card.
      const again = yield* pressAs("jr-2", 2)
      expect(again.body).toMatchObject({ outcome: "approval-required", approvalRequired: { approvalId } })
      expect(query(node.dataDir, "SELECT id FROM jobs")).toEqual([])
      const card = query(node.dataDir, "SELECT task_id, operation_digest FROM task_approvals WHERE id = ?", approvalId)[0]
      const granted = yield* decide(card.task_id, approvalId, { decision: "granted", digest: card.operation_digest })
      expect(granted).toMatchObject({ status: 200, body: { decision: "granted", jobId: expect.stringMatching(/^job_/) } })
      const jobs = yield* node.request("GET", `/conversations/${id}/widgets/${placed.instanceId}/jobs`)
      expect(jobs.body.jobs.map((job: any) => job.jobId)).toEqual([granted.body.jobId])
      expect(query(node.dataDir, "SELECT id FROM jobs")).toEqual([{ id: granted.body.jobId }])
      // A denied card starts nothing.
      const other = yield* Effect.orDie(wire(client.widgets.press({
        path: { id, instanceId: placed.instanceId },
        payload: {
          actionBindingId: "reindex",
          expectedRevision: 3,
          expectedBindingDigest: placed.bindings.find((b: any) => b.id === "reindex").digest,
          input: { full: true },
          invocationId: "jr-4"
        },
        withResponse: true
      })))
      const otherId = other.body.approvalRequired.approvalId
      expect(otherId).not.toBe(approvalId)
      const otherCard = query(node.dataDir, "SELECT task_id, operation_digest FROM task_approvals WHERE id = ?", otherId)[0]
      const denied = yield* decide(otherCard.task_id, otherId, { decision: "denied", digest: otherCard.operation_digest })
      expect(denied).toMatchObject({ status: 200, body: { decision: "denied", jobId: null } })
      expect(query(node.dataDir, "SELECT id FROM jobs")).toEqual([{ id: granted.body.jobId }])
      // A deny rule refuses the press outright: 403, no card, no job.
      yield* setPreference("execution.denyRules", [{ package: probeId, tool: "reindex" }])
      const refused = yield* pressAs("jr-3", 4)
      expect(refused).toMatchObject({ status: 403, body: { code: "POLICY_REFUSED", outcome: "refused", mayHaveRun: false } })
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM task_approvals")[0].n).toBe(2)
    })))
})

