/** The message rules of the spec, through the real node server on a real data dir, on the test clock. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"

const script: ScriptInput = {
  rules: [
    { match: "^slow", steps: [{ reasoning: "thinking" }, { delta: "one " }, { delay: 1000 }, { delta: "two" }] },
    { match: "^late", steps: [{ delay: 1000 }, { delta: "finally" }] },
    { match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }, { delta: "never" }] }
  ]
}

const withNode = <A, E>(effect: Effect.Effect<A, E, TestNode>, options: Parameters<typeof NodeServer.layer>[0] = { script }) =>
  Effect.provide(effect, NodeServer.layer(options))

const conversation = Effect.gen(function*() {
  const node = yield* TestNode
  const created = yield* node.request("POST", "/conversations", { body: {} })
  expect(created.status).toBe(201)
  return created.body.conversationId as string
})

const timeline = (id: string) =>
  Effect.flatMap(TestNode, (node) => node.request("GET", `/conversations/${id}/timeline`)).pipe(
    Effect.map((r) => r.body.entries as Array<any>)
  )

const textOf = (entry: any) => entry.blocks.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")

const hasEvent = (name: string) => (events: ReadonlyArray<NodeServer.SseEvent>) => events.some((e) => e.event === name)

describe("messages", () => {
  it.scoped("the waiting route answers with the result and stores both messages with their origin", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const response = yield* node.request("POST", `/conversations/${id}/messages`, { body: { text: "hello" }, as: "cli-api" })
      expect(response.status).toBe(200)
      expect(response.body.resolution).toBe("answered")
      expect(response.body.taskId).toMatch(/^task_/)
      expect(response.body.messageIds).toHaveLength(2)
      const [user, reply] = response.body.timeline.entries
      expect(user).toMatchObject({ role: "user", origin: "cli-api", channel: "text", status: "complete" })
      expect(reply).toMatchObject({ role: "assistant", status: "complete" })
      expect(textOf(reply)).toBe("You said: hello")
      expect(yield* timeline(id)).toHaveLength(2)
    })))

  it.scoped("the streaming route sends reasoning and deltas, then done with the result", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow" })
      expect(stream.status).toBe(200)
      yield* stream.until((events) => events.filter((e) => e.event === "delta").length === 1)
      yield* TestClock.adjust(Duration.seconds(1))
      const events = yield* stream.ended
      expect(events.map((e) => e.event)).toEqual(["reasoning", "delta", "delta", "done"])
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => `${events[0]!.id!.split(":")[0]}:${i + 1}`))
      const done = events.at(-1)!.data
      expect(done.resolution).toBe("answered")
      expect(textOf(done.timeline.entries[1])).toBe("one two")
    })))
})
