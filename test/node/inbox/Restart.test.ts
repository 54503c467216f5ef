/**
 * Work cut off by a restart (spec, "Background work retry"): the real CLI's node is killed with SIGKILL while a
 * turn runs; the next node finds the turn stopped, the inbox says so with Retry, and retry runs the same request
 * again as new work.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import * as NodeServer from "../../support/NodeServer.js"
import { eventually, textOf, timeline } from "../../support/NodeFixtures.js"
import { exited, spawnNode } from "../../support/NodeProcess.js"
import { act, inbox } from "./Support.js"

const script: ScriptInput = {
  rules: [{ match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }, { delta: "never" }] }]
}

describe("work cut off by a restart", () => {
  it.scoped("is in the inbox with Retry after the next start, and retry runs its request again", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const { baseUrl, child, fetchJson, headers } = yield* spawnNode({ dataDir, script })
      const created = yield* fetchJson("POST", "/conversations", {})
      const id = created.body.conversationId as string
      // The waiting route answers once the turn ends; the turn never ends, so it is left running.
      const controller = new AbortController()
      void fetch(`${baseUrl}/conversations/${id}/messages`, {
        method: "POST",
        headers,
        body: JSON.stringify({ text: "forever please" }),
        signal: controller.signal
      }).catch(() => undefined)
      const running = yield* eventually(
        fetchJson("GET", `/conversations/${id}/timeline`),
        (r) => r.body.entries?.some((e: any) => e.role === "assistant" && textOf(e) === "start ") === true,
        "the turn's first text is stored"
      )
      const taskId = running.body.entries.find((e: any) => e.role === "user").taskId as string
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited(child))
      controller.abort()

      yield* Effect.provide(
        Effect.gen(function*() {
          expect((yield* timeline(id)).map((e) => [e.role, e.status])).toEqual([["user", "complete"], ["assistant", "stopped"]])
          const notice = (yield* inbox()).notices.find((n) => n.kind === "work-failed" && n.workId === taskId)!
          expect(notice).toMatchObject({ conversationId: id, taskId })
          expect(notice.actions[0]).toEqual({ action: "retry" })
          const retried = yield* act(notice.noticeId, "retry")
          expect(retried).toMatchObject({ status: 200, body: { action: "retry", outcome: "done", workId: expect.stringMatching(/^task_/) } })
          const entries = yield* timeline(id)
          expect(entries.filter((e) => e.role === "user").map(textOf)).toEqual(["forever please", "forever please"])
          expect(entries.find((e) => e.role === "user" && e.taskId === retried.body.workId)).toBeDefined()
        }),
        NodeServer.layer({ dataDir, script })
      )
    }))
})
