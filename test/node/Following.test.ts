/**
 * Following turns as Streams, through the real node on the test clock: who gets which events, what a resume may
 * name, and what the waiting route's background answer tells its client. JSON calls go through the typed client;
 * raw requests where a header, the SSE framing or the 200/202 status is the point.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { conversation, doneOf, eventually, hasEvent, send, textOf, timeline, typedClient } from "../support/NodeFixtures.js"

const script: ScriptInput = {
  rules: [
    { match: "^slow", steps: [{ delta: "one " }, { delay: 1000 }, { delta: "two " }, { delay: 1000 }, { delta: "three" }] },
    { match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }, { delta: "never" }] }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

describe("followers", () => {
  it.scoped("a follower that disconnects ends only its own stream: the others and the turn go on", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow" })
      yield* first.until(hasEvent("delta"))
      const taskId = first.events[0]!.id!.split(":")[0]
      const resume = { headers: { "last-event-id": `${taskId}:0` } }
      const leaving = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "x" }, resume)
      const staying = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "x" }, resume)
      yield* leaving.until(hasEvent("delta"))
      yield* staying.until(hasEvent("delta"))
      yield* leaving.abort
      yield* TestClock.adjust(Duration.seconds(2))
      for (const stream of [first, staying]) {
        const events = yield* stream.ended
        expect(events.map((e) => e.event)).toEqual(["delta", "delta", "delta", "done"])
        expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4].map((seq) => `${taskId}:${seq}`))
      }
      const reply = (yield* timeline(id))[1]
      expect(reply).toMatchObject({ status: "complete" })
      expect(textOf(reply)).toBe("one two three")
    })))

  it.scoped("a stream opens with its comment at once, also one whose message waits behind the running turn", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const path = `/conversations/${id}/messages/stream`
      // Raw bytes: the framing before any event is the point.
      const firstBytes = (as: "person" | "cli-api", enough: (text: string) => boolean) =>
        Effect.promise(async () => {
          const response = await fetch(`${node.baseUrl}${path}`, {
            method: "POST",
            headers: { ...node.headers(as), "content-type": "application/json" },
            body: JSON.stringify({ text: "forever" })
          })
          const reader = response.body!.getReader()
          let text = ""
          while (!enough(text)) text += new TextDecoder().decode((await reader.read()).value)
          await reader.cancel()
          return text
        })
      const running = yield* firstBytes("person", (text) => text.includes("event: delta"))
      expect(running.startsWith(": connected\n\nid: task_")).toBe(true)
      expect(running).toContain("event: delta\n")
      // Another origin's message waits (rule 2): its response says nothing yet but the opening comment.
      expect(yield* firstBytes("cli-api", (text) => text.length > 0)).toBe(": connected\n\n")
    })))

  it.scoped("a stream's response says it is SSE, not to be cached or buffered by a proxy", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const headers = yield* Effect.promise(async () => {
        const response = await fetch(`${node.baseUrl}/conversations/${id}/messages/stream`, {
          method: "POST",
          headers: { ...node.headers("person"), "content-type": "application/json" },
          body: JSON.stringify({ text: "Open settings" })
        })
        await response.text()
        return { status: response.status, type: response.headers.get("content-type"), cache: response.headers.get("cache-control"), buffering: response.headers.get("x-accel-buffering") }
      })
      expect(headers).toEqual({ status: 200, type: "text/event-stream", cache: "no-cache", buffering: "no" })
    })))

  it.scoped("an app intent's only event is done, without an id it could not resume", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "Open settings" })
      const events = yield* stream.ended
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ id: undefined, event: "done", data: { resolution: "app-intent" } })
    })))
})

describe("Last-Event-ID", () => {
  const refused = [
    ["not an id at all", "garbage"],
    ["the id of an answer that ran no turn", "none:1"],
    ["a seq that is not a number", "task_abc:x"],
    ["a task this node never ran", "task_doesnotexist:1"],
    ["a header far too long", `task_${"a".repeat(5000)}:1`]
  ] as const

  it.scoped.each(refused)("%s is 400 INVALID_INPUT and starts no turn", ([, value]) =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const response = yield* node.request("POST", `/conversations/${id}/messages/stream`, {
        body: { text: "hello" },
        headers: { "last-event-id": value }
      })
      expect(response.status).toBe(400)
      expect(response.body.code).toBe("INVALID_INPUT")
      expect(JSON.stringify(response.body).length).toBeLessThan(1000)
      expect(yield* timeline(id)).toEqual([])
    })))

  it.scoped("a task of another conversation is 400 INVALID_INPUT", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const other = yield* conversation
      const answered = yield* client.conversations.send({ path: { id: other }, payload: { text: "hi" } })
      const id = yield* conversation
      const response = yield* node.request("POST", `/conversations/${id}/messages/stream`, {
        body: { text: "hello" },
        headers: { "last-event-id": `${answered.taskId}:1` }
      })
      expect(response.status).toBe(400)
      expect(response.body.code).toBe("INVALID_INPUT")
      expect(yield* timeline(id)).toEqual([])
    })))
})

describe("the waiting route's background answer", () => {
  it.scoped("names the stored messages and the task, also of a message that waited behind a running turn", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const running = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "forever" })
      yield* running.until(hasEvent("delta"))
      // Another surface never steers into the person's turn: this one waits.
      const fiber = yield* Effect.fork(
        node.request("POST", `/conversations/${id}/messages`, { body: { text: "queued" }, as: "cli-api" })
      )
      const queued = yield* eventually(timeline(id), (entries) => entries.length === 3, "the message is stored")
      yield* TestClock.adjust(Duration.seconds(60))
      const response = yield* fiber.await.pipe(Effect.flatten)
      expect(response.status).toBe(202)
      expect(response.body.resolution).toBe("background")
      expect(response.body.messageIds).toEqual([queued[2].messageId])
      expect(response.body.taskId).toMatch(/^task_/)
      expect(response.body.taskId).toBe(queued[2].taskId)
      // Stop cancels it (rule 6); its card and its stored `done` belong to that task.
      const cli = yield* typedClient("cli-api")
      expect(yield* cli.conversations.stop({ path: { id }, payload: {} })).toEqual({ stopped: true })
      expect(doneOf(yield* running.ended).resolution).toBe("stopped")
      const entries = yield* eventually(timeline(id), (all) => all.length === 4, "the cancelled card")
      expect(entries[3]).toMatchObject({ role: "assistant", status: "cancelled", taskId: response.body.taskId })
      const resumed = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "x" }, {
        headers: { "last-event-id": `${response.body.taskId}:0` }
      })
      const events = yield* resumed.ended
      expect(events.map((e) => [e.id, e.event])).toEqual([[`${response.body.taskId}:1`, "done"]])
      expect(events[0]!.data.resolution).toBe("cancelled")
    })))

  it.scoped("names the user's message and its reply of a turn that outlives the budget", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const fiber = yield* Effect.fork(node.request("POST", `/conversations/${id}/messages`, { body: { text: "forever" } }))
      const entries = yield* eventually(timeline(id), (all) => all.length === 2, "the reply exists")
      yield* TestClock.adjust(Duration.seconds(60))
      const response = yield* fiber.await.pipe(Effect.flatten)
      expect(response.status).toBe(202)
      expect(response.body.messageIds).toEqual(entries.map((e) => e.messageId))
      expect(response.body.taskId).toBe(entries[1].taskId)
    })))
})

describe("the waiting route's budget", () => {
  it.scoped("answers 202 background when the turn outlives it, and the turn goes on", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const fiber = yield* Effect.fork(send(id, { text: "forever" }))
      yield* eventually(timeline(id), (entries) => entries.length === 2, "the reply exists")
      yield* TestClock.adjust(Duration.seconds(60))
      const response = yield* fiber.await.pipe(Effect.flatten)
      expect(response.status).toBe(202)
      expect(response.body.resolution).toBe("background")
      expect(response.body.taskId).toMatch(/^task_/)
      const entries = yield* timeline(id)
      expect(entries[1]).toMatchObject({ status: "writing" })
    })))
})
