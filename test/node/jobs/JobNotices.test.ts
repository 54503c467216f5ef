/**
 * A job's end in the inbox, on the real node with the probe service run over MCP: GET /inbox shows the notice
 * (`job-ended` / `job-failed`, its title, the sentence naming its result files, the actions it offers) and an
 * action taken on it is stored; a failed job offers no retry (docs/decisions.md, "Job notices").
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, query } from "../../support/NodeFixtures.js"
import { install } from "../tools/Fixtures.js"
import { act, inbox } from "../inbox/Support.js"
import { jobProbe, jobUntil, place, probeId, start } from "./Fixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ model: "none" }))

const actionsOf = (notice: { readonly actions: ReadonlyArray<{ readonly action: string; readonly unavailable?: string | undefined }> }) =>
  notice.actions.map((a) => (a.unavailable === undefined ? a.action : `${a.action}:${a.unavailable}`))

const generic = ["open", "mark-read", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]

describe("job notices in the inbox", () => {
  it.scoped("a finished job's notice is read in GET /inbox and marked read, then dismissed", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const started = yield* start(widget, "progress", { steps: 1 })
      yield* jobUntil(widget, started.jobId, "completed")

      const notice = (yield* inbox()).notices.find((n) => n.kind === "job-ended" && n.conversationId === id)
      expect(notice).toMatchObject({
        kind: "job-ended",
        title: "A background job finished",
        body: "The background job progress finished.",
        conversationId: id,
        readAt: null,
        dismissedAt: null,
        suppressed: false
      })
      expect(actionsOf(notice!)).toEqual(generic)
      const n = notice!.noticeId

      expect(yield* act(n, "mark-read")).toMatchObject({ status: 200, body: { noticeId: n, action: "mark-read", outcome: "done" } })
      const read = (yield* inbox()).notices.find((x) => x.noticeId === n)!
      expect(read.readAt).toEqual(expect.any(String))
      expect(actionsOf(read)).toEqual(generic.map((a) => (a === "mark-read" ? "mark-unread" : a)))
      expect(query(node.dataDir, "SELECT read_at IS NOT NULL AS read FROM notices WHERE id = ?", n)).toEqual([{ read: 1 }])
      // The app's own actions are not the node's to take.
      expect(yield* act(n, "open")).toMatchObject({ status: 409, body: { code: "SURFACE_ACTION", action: "open" } })
      // Suppress silences the job's capability: the notice says so, the source is the package's tool.
      expect((yield* act(n, "suppress")).status).toBe(200)
      expect(query(node.dataDir, "SELECT source FROM notices WHERE id = ?", n)).toEqual([{ source: `job:${probeId}/progress` }])
      expect((yield* inbox()).notices.find((x) => x.noticeId === n)!.suppressed).toBe(true)
      expect((yield* act(n, "dismiss")).status).toBe(200)
      expect((yield* inbox()).notices.map((x) => x.noticeId)).not.toContain(n)
    })))

  it.scoped("a failed job writes job-failed; retry is not offered and is refused, nothing started", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(jobProbe())
      const id = yield* conversation
      const widget = yield* place(id)
      const started = yield* start(widget, "fail")
      yield* jobUntil(widget, started.jobId, "failed")

      const notice = (yield* inbox()).notices.find((n) => n.conversationId === id && n.kind.startsWith("job-"))
      expect(notice).toMatchObject({ kind: "job-failed", title: "A background job failed", body: "The background job fail failed." })
      expect(actionsOf(notice!)).toEqual(generic)
      expect(yield* act(notice!.noticeId, "retry")).toMatchObject({ status: 409, body: { code: "ACTION_NOT_OFFERED", action: "retry" } })
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM jobs WHERE conversation_id = ?", id)).toEqual([{ n: 1 }])
    })))
})
