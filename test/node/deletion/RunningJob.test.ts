/**
 * Conversation deletion and a running package job, all over the node's HTTP routes (issue 16, point 7): a widget's
 * button starts a job of the probe service (a real MCP process); while it runs, every step of the deletion is
 * refused with the spec's 409 body naming the job, also the last one with a permit in hand, and nothing is
 * deleted; once the job has ended (cancelled through POST /work/{id}/cancel), the same permit deletes the
 * conversation with the job's row.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, query } from "../../support/NodeFixtures.js"
import { install, place, press, pressOf, script, widgetProbe } from "../widgets/Fixtures.js"

/** The widget probe with its `slow` tool declared as a job: the `slow` button starts a job that waits `millis`. */
const slowJobProbe = () => {
  const folder = widgetProbe()
  const file = path.join(folder, "package.json")
  const json = JSON.parse(fs.readFileSync(file, "utf8"))
  for (const tool of json.clark.tools) if (tool.name === "slow") tool.execution = { kind: "job", version: 1 }
  fs.writeFileSync(file, JSON.stringify(json, null, 2))
  return folder
}

const busySay = "This conversation can't be deleted yet: a job is still running."

describe("deletion and a running job", () => {
  it.scoped("refused at every step while the job runs, nothing deleted; the permit deletes once the job ended", () =>
    Effect.provide(
      Effect.gen(function*() {
        const node = yield* TestNode
        yield* install(slowJobProbe())
        const id = yield* conversation
        const placed = yield* place(id)
        // Step 1 and 2 before the job: the person holds a permit.
        const asked = yield* node.request("POST", `/conversations/${id}/delete`, { body: {} })
        expect(asked.status).toBe(202)
        const confirmed = yield* node.request("POST", "/app-intents/confirm", {
          body: { confirmationToken: asked.body.decision.confirmationToken, decision: "granted" }
        })
        expect(confirmed.status).toBe(200)
        const permit = confirmed.body.decision.intent.deletionPermit as string

        const started = yield* press(id, placed.instanceId, pressOf(placed, "slow", { millis: 600_000 }, "job-1"))
        expect(started).toMatchObject({ status: 200, body: { outcome: "done", job: expect.stringMatching(/^job_/) } })
        const jobId = started.body.job as string
        const jobRoute = `/conversations/${id}/widgets/${placed.instanceId}/jobs/${jobId}`
        yield* eventually(node.request("GET", jobRoute), (r) => r.body.job?.status === "running", "the job runs", 3000)

        const refusal = {
          status: 409,
          body: { deleted: false, decision: { kind: "refused", say: busySay } }
        }
        expect(yield* node.request("POST", `/conversations/${id}/delete`, { body: {} })).toMatchObject(refusal)
        // The last step checks again: the permit does not get past a running job, and is not spent.
        expect(yield* node.request("POST", `/conversations/${id}/delete`, { body: { deletionPermit: permit } }))
          .toMatchObject(refusal)
        expect(query(node.dataDir, "SELECT id FROM conversations WHERE id = ?", id)).toHaveLength(1)
        expect(query(node.dataDir, "SELECT id FROM jobs WHERE conversation_id = ?", id)).toEqual([{ id: jobId }])

        // The job ends (cancelled through the work route); the same permit now deletes.
        expect(yield* node.request("POST", `/work/${jobId}/cancel`)).toMatchObject({ status: 202, body: { accepted: true } })
        yield* eventually(node.request("GET", jobRoute), (r) => r.body.job?.status === "cancelled", "the job ended", 3000)
        const deleted = yield* node.request("POST", `/conversations/${id}/delete`, { body: { deletionPermit: permit } })
        expect(deleted).toMatchObject({ status: 200, body: { deleted: true, conversationId: id } })
        expect(query(node.dataDir, "SELECT id FROM conversations WHERE id = ?", id)).toEqual([])
        expect(query(node.dataDir, "SELECT id FROM jobs WHERE conversation_id = ?", id)).toEqual([])
      }),
      NodeServer.layer({ script })
    ))
})
