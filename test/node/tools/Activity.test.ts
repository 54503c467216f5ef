/**
 * GET /work and GET /activity on the real node: the turns' tasks with their origin and state (waiting while the
 * person has a risky step or an unknown effect to decide), and the audit log read back newest first with each
 * row's origin, channel (`voice-agent` apart from `voice`) and outcome.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import { type TaskRow, taskStatus } from "../../../services/node/Activity.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, send, typedClient } from "../../support/NodeFixtures.js"
import { install, probeCopy, probeTool, setPreference } from "./Fixtures.js"

const tool = probeTool

const script: ScriptInput = {
  rules: [
    { match: "^read probe", steps: [tool("read_value", { key: "colour" })], after: [{ delta: "Read." }] },
    { match: "^write probe", steps: [tool("write_value", { key: "colour", value: "blue" })], after: [{ delta: "Written." }] },
    { match: "^crash probe", steps: [tool("crash", {})], after: [{ delta: "Not read." }] }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

const row = (over: Partial<TaskRow>): TaskRow => ({
  replyStatus: null,
  messageStatus: "complete",
  approvalWaiting: null,
  unknownEffect: null,
  ...over
})

describe("a task's state", () => {
  it.each([
    ["a reply being written is running", row({ replyStatus: "writing" }), "running"],
    ["a complete reply is completed", row({ replyStatus: "complete" }), "completed"],
    ["a failed reply failed", row({ replyStatus: "failed" }), "failed"],
    ["a stopped reply is cancelled", row({ replyStatus: "stopped" }), "cancelled"],
    ["a message cancelled before its turn is cancelled", row({ messageStatus: "cancelled" }), "cancelled"],
    ["a message waiting behind another turn is queued", row({ messageStatus: "waiting" }), "queued"],
    ["a risky step waiting for the person: waiting", row({ replyStatus: "complete", approvalWaiting: "tap_1" }), "waiting"],
    ["an unknown effect: waiting as uncertain", row({ replyStatus: "complete", unknownEffect: "eff_1" }), "waiting"]
  ] as const)("%s", (_, task, status) => {
    expect(taskStatus(task)).toBe(status)
  })
})

describe("GET /work and GET /activity", () => {
  it.scoped("list the tasks with origin and state, and the audit log with origin, channel and outcome", () =>
    withNode(Effect.gen(function*() {
      yield* install(probeCopy({ write_value: "external-write" }))
      expect((yield* setPreference("execution.machineTurns", "ask")).status).toBe(200)
      const id = yield* conversation
      const own = yield* send(id, { text: "read probe" }, "voice")
      const asked = yield* send(id, { text: "write probe" }, "cli-api")
      const crashed = yield* send(id, { text: "crash probe" })
      const cli = yield* typedClient("cli-api")

      const { work } = yield* Effect.orDie(cli.work.list({ urlParams: {} }))
      const byTask = new Map(work.map((item) => [item.taskId, item]))
      expect(byTask.get(own.body.taskId!)).toMatchObject({ kind: "turn", status: "completed", origin: "person", title: "read probe" })
      const approvalId = asked.body.timeline.entries.at(-1)!.blocks.find((b: any) => b.type === "tool")!
      expect(byTask.get(asked.body.taskId!)).toMatchObject({
        status: "waiting",
        origin: "cli-api",
        waitingFor: { kind: "task-approval", approvalId: (approvalId as any).approvalId }
      })
      expect(byTask.get(crashed.body.taskId!)).toMatchObject({ status: "waiting", waitingFor: { kind: "unknown-effect" } })
      // Newest first, filtered by conversation, bounded.
      expect(work.map((item) => item.taskId)).toEqual([crashed.body.taskId, asked.body.taskId, own.body.taskId])
      const other = yield* conversation
      expect((yield* Effect.orDie(cli.work.list({ urlParams: { conversationId: other } }))).work).toEqual([])
      expect((yield* Effect.orDie(cli.work.list({ urlParams: { limit: 1 } }))).work).toHaveLength(1)

      const page = yield* Effect.orDie(cli.work.activity({ urlParams: {} }))
      const kinds = page.activity.map((r) => r.kind)
      expect(kinds.indexOf("task-approval-asked")).toBeGreaterThanOrEqual(0)
      const approvalRow = page.activity.find((r) => r.kind === "task-approval-asked")!
      expect(approvalRow).toMatchObject({ origin: "cli-api", taskId: asked.body.taskId, outcome: "asked" })
      // The agent's call while answering something spoken is voice-agent; the spoken message itself is voice.
      const voiceCall = page.activity.find((r) => r.kind === "tool-call" && r.taskId === own.body.taskId)!
      expect(voiceCall).toMatchObject({ origin: "person", channel: "voice-agent", outcome: "done" })
      const voiceMessage = page.activity.find((r) => r.kind === "message" && r.taskId === own.body.taskId)!
      expect(voiceMessage).toMatchObject({ channel: "voice", outcome: "complete" })
      const unknownCall = page.activity.find((r) => r.kind === "tool-call" && r.taskId === crashed.body.taskId)!
      expect(unknownCall.outcome).toBe("unknown")

      // Paging: newest first, the cursor continues where the page ended, nothing repeated or skipped.
      const first = yield* Effect.orDie(cli.work.activity({ urlParams: { limit: 2 } }))
      expect(first.activity.map((r) => r.activityId)).toEqual(page.activity.slice(0, 2).map((r) => r.activityId))
      const second = yield* Effect.orDie(cli.work.activity({ urlParams: { limit: 2, before: first.nextCursor! } }))
      expect(second.activity.map((r) => r.activityId)).toEqual(page.activity.slice(2, 4).map((r) => r.activityId))
      // A cursor that is not one of ours reads from the newest.
      const odd = yield* Effect.orDie(cli.work.activity({ urlParams: { limit: 2, before: "not-a-cursor" } }))
      expect(odd.activity.map((r) => r.activityId)).toEqual(first.activity.map((r) => r.activityId))
      // Raw: the typed client would refuse to send these.
      const node = yield* TestNode
      for (const query of ["limit=0", "limit=201", "limit=x", `before=${"9".repeat(201)}`]) {
        const bad = yield* node.request("GET", `/activity?${query}`, { as: "cli-api" })
        expect(bad, query).toMatchObject({ status: 400, body: { code: "INVALID_INPUT" } })
      }
      expect((yield* node.request("GET", "/work?limit=0", { as: "cli-api" })).status).toBe(400)
    })))
})
