/**
 * Background work against the real node (spec, "Background work retry"): on this node a message's task. Work that
 * failed is in GET /work and the inbox; retry starts new work with its own id for the same request and
 * conversation, once; finished or running work is not retryable; a conversation that is busy answers 429
 * BACKGROUND_BUSY and leaves the work retryable; cancel stops running work.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, query, send, textOf, timeline, typedClient, wire } from "../../support/NodeFixtures.js"
import { act, inbox, questionTtl, script } from "./Support.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ script, turns: { questionTtl } }))

const work = (conversationId?: string) =>
  Effect.flatMap(typedClient(), (client) =>
    Effect.orDie(client.work.list({ urlParams: conversationId === undefined ? {} : { conversationId } })))

const retry = (id: string) =>
  Effect.flatMap(typedClient(), (client) => Effect.orDie(wire(client.work.retry({ path: { id }, withResponse: true }))))

const cancel = (id: string) =>
  Effect.flatMap(typedClient(), (client) => Effect.orDie(wire(client.work.cancel({ path: { id }, withResponse: true }))))

/** A message whose turn fails; its task id. */
const failed = (id: string) =>
  Effect.gen(function*() {
    const response = yield* send(id, { text: "break it" })
    expect(response.body.resolution).toBe("failed")
    return response.body.taskId as string
  })

describe("background work", () => {
  it.scoped("failed work is listed and in the inbox with Retry; retry runs the same request as new work, once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const taskId = yield* failed(id)
      expect((yield* work(id)).work).toEqual([expect.objectContaining({ workId: taskId, status: "failed", title: "break it" })])
      const notice = (yield* inbox()).notices.find((n) => n.kind === "work-failed" && n.workId === taskId)!
      expect(notice).toMatchObject({ conversationId: id, taskId, body: "the model broke" })
      expect(notice.actions.map((a) => a.action)).toContain("retry")

      const retried = yield* retry(taskId)
      expect(retried).toEqual({ status: 202, body: { accepted: true, workId: expect.stringMatching(/^task_/), retryOf: taskId } })
      const newId = retried.body.workId as string
      expect(newId).not.toBe(taskId)
      const entries = yield* eventually(
        timeline(id),
        (entries) => entries.some((e) => e.taskId === newId && e.role === "assistant" && e.status === "failed"),
        "the retry ran"
      )
      expect(entries.filter((e) => e.role === "user").map(textOf)).toEqual(["break it", "break it"])
      const listed = (yield* work(id)).work
      expect(listed.find((w) => w.workId === taskId)).toMatchObject({ retriedAs: newId })
      expect(listed.find((w) => w.workId === newId)).toMatchObject({ retryOf: taskId, conversationId: id, status: "failed" })

      // A second press, here or through the notice, is ALREADY_RETRIED; nothing new runs.
      expect(yield* retry(taskId)).toMatchObject({ status: 409, body: { code: "ALREADY_RETRIED", retriedAs: newId } })
      expect((yield* act(notice.noticeId, "retry")).body).toMatchObject({ code: "ALREADY_RETRIED" })
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM messages WHERE conversation_id = ? AND role = 'user'", id))
        .toEqual([{ n: 2 }])
      // The retry's own failure has its own notice, and retrying it through that notice answers the new work.
      const second = yield* eventually(
        inbox(),
        (page) => page.notices.some((n) => n.workId === newId),
        "the retry's notice"
      )
      const viaNotice = yield* act(second.notices.find((n) => n.workId === newId)!.noticeId, "retry")
      expect(viaNotice).toMatchObject({ status: 200, body: { action: "retry", outcome: "done", workId: expect.stringMatching(/^task_/) } })
      expect(query(node.dataDir, "SELECT detail FROM audit_log WHERE kind = 'work-retried'")).toHaveLength(2)
    })))

  it.scoped("finished work is 409 WORK_NOT_RETRYABLE, unknown work 404; identical retries at once start one", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const done = yield* send(id, { text: "hello" })
      const doneId = done.body.taskId!
      expect(yield* retry(doneId)).toMatchObject({ status: 409, body: { code: "WORK_NOT_RETRYABLE", status: "completed" } })
      expect(yield* retry("task_nope")).toMatchObject({ status: 404, body: { code: "RESOURCE_NOT_FOUND" } })
      expect(yield* cancel(doneId)).toMatchObject({ status: 409, body: { code: "JOB_NOT_RUNNING", status: "completed" } })

      const taskId = yield* failed(id)
      const presses = yield* Effect.all(Array.from({ length: 10 }, () => retry(taskId)), { concurrency: "unbounded" })
      expect(presses.filter((p) => p.status === 202)).toHaveLength(1)
      expect(presses.filter((p) => p.status === 409 && p.body.code === "ALREADY_RETRIED")).toHaveLength(9)
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM work_retries")).toEqual([{ n: 1 }])
    })))

  it.scoped("a busy conversation answers 429 BACKGROUND_BUSY and leaves the work retryable; running work is cancelled and then retryable", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const taskId = yield* failed(id)
      // A slow turn holds the conversation (its delay runs on the test clock).
      const slow = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow please" })
      const running = yield* eventually(work(id), (w) => w.work.some((x) => x.status === "running"), "the slow turn runs")
      const slowId = running.work.find((x) => x.status === "running")!.workId
      expect(yield* retry(taskId)).toMatchObject({ status: 429, body: { code: "BACKGROUND_BUSY", reason: "conversation-busy" } })
      expect(yield* retry(slowId)).toMatchObject({ status: 409, body: { code: "WORK_NOT_RETRYABLE", status: "running" } })
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM work_retries")).toEqual([{ n: 0 }])

      expect(yield* cancel(slowId)).toEqual({ status: 202, body: { accepted: true, workId: slowId } })
      yield* slow.ended
      yield* eventually(work(id), (w) => w.work.find((x) => x.workId === slowId)?.status === "cancelled", "the cancel")
      expect(yield* cancel(slowId)).toMatchObject({ status: 409, body: { code: "JOB_NOT_RUNNING" } })
      // Both are retryable now: the one the busy node refused, and the stopped one.
      expect((yield* retry(taskId)).status).toBe(202)
      yield* eventually(work(id), (w) => !w.work.some((x) => x.status === "running" || x.status === "queued"), "the retry ends")
      expect((yield* retry(slowId)).status).toBe(202)
      yield* TestClock.adjust(Duration.minutes(10))
    })))
})
