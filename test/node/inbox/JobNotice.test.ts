/**
 * The inbox after a package job finishes, as the README shows it: GET /inbox over HTTP on the real node with the
 * probe service running the job in its own process; the notice names the job as its work, says what happened in
 * the conversation's words, and offers open, the usual actions and suppress (its capability is its source).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation } from "../../support/NodeFixtures.js"
import { install } from "../tools/Fixtures.js"
import { jobProbe, jobUntil, place, start } from "../jobs/Fixtures.js"

describe("the inbox after a job finishes", () => {
  it.scoped("lists a job-ended notice naming the job, with what to do about it", () =>
    Effect.provide(
      Effect.gen(function*() {
        const node = yield* TestNode
        yield* install(jobProbe())
        const id = yield* conversation
        const widget = yield* place(id)
        const started = yield* start(widget, "progress", { steps: 2 })
        yield* jobUntil(widget, started.jobId, "completed")
        const page = yield* node.request("GET", "/inbox")
        expect(page.status).toBe(200)
        const notice = page.body.notices.find((n: any) => n.kind === "job-ended")
        expect(notice).toEqual({
          noticeId: expect.stringMatching(/^ntc_/),
          kind: "job-ended",
          title: "A background job finished",
          body: "The background job progress finished.",
          ref: { kind: "notice", id: notice.noticeId },
          conversationId: id,
          workId: started.jobId,
          createdAt: expect.any(String),
          readAt: null,
          snoozedUntil: null,
          dismissedAt: null,
          suppressed: false,
          actions: ["open", "mark-read", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]
            .map((action) => ({ action }))
        })
        // Suppress silences the job's capability: the next job of that tool writes no notice.
        const suppressed = yield* node.request("POST", `/inbox/notices/${notice.noticeId}/actions/suppress`, { body: {} })
        expect(suppressed).toMatchObject({ status: 200, body: { action: "suppress", outcome: "done" } })
        const again = yield* start(widget, "progress", { steps: 1 })
        yield* jobUntil(widget, again.jobId, "completed")
        const after = (yield* node.request("GET", "/inbox")).body.notices.filter((n: any) => n.kind === "job-ended")
        expect(after.map((n: any) => [n.workId, n.suppressed])).toEqual([[started.jobId, true]])
      }),
      NodeServer.layer({ model: "none" })
    ))
})
