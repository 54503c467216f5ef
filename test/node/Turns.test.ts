/** The message rules of the spec, through the real node server on a real data dir, on the test clock. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import { conversation, doneOf, eventually, hasEvent, send, textOf, timeline, typedClient } from "../support/NodeFixtures.js"

const script: ScriptInput = {
  rules: [
    { match: "^slow", steps: [{ reasoning: "thinking" }, { delta: "one " }, { delay: 1000 }, { delta: "two" }] },
    { match: "^late", steps: [{ delay: 1000 }, { delta: "finally" }] },
    { match: "^forever", steps: [{ delta: "start " }, { delay: 3_600_000 }, { delta: "never" }] }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, options: Parameters<typeof NodeServer.layer>[0] = { script }) =>
  Effect.provide(effect, NodeServer.layer(options))

describe("messages", () => {
  it.scoped("the waiting route answers with the result and stores both messages with their origin", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const response = yield* send(id, { text: "hello" }, "cli-api")
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

/** Starts a "slow" turn on the stream route and waits until its reply is being written. */
const writingTurn = (id: string, as: NodeServer.As = "person", text = "slow") =>
  Effect.gen(function*() {
    const node = yield* TestNode
    const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text }, { as })
    yield* stream.until(hasEvent("delta"))
    return stream
  })


describe("rule 4: bare text from the same origin and channel is steered into the turn being written", () => {
  it.scoped("on the streaming route: done says steered with no message ids, and the turn answers it", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* writingTurn(id)
      const steer = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "and blue" })
      yield* TestClock.adjust(Duration.seconds(1))
      const steered = doneOf(yield* steer.ended)
      const answered = doneOf(yield* first.ended)
      expect(steered.resolution).toBe("steered")
      expect(steered.messageIds).toEqual([])
      expect(steered.taskId).toBe(answered.taskId)
      expect(answered.resolution).toBe("answered")
      const entries = yield* timeline(id)
      expect(entries.map((e) => [e.role, e.status, e.taskId === answered.taskId])).toEqual([
        ["user", "complete", true],
        ["assistant", "complete", true],
        ["user", "complete", true]
      ])
      // The model saw the steered message in the same turn.
      expect(textOf(entries[1])).toBe("one twoYou said: and blue")
    })))

  it.scoped("on the waiting route too", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const first = yield* writingTurn(id, "cli-api")
      const fiber = yield* Effect.fork(
        send(id, { text: "more" }, "cli-api")
      )
      // The steered message is stored on arrival; only then may the turn's clock move on.
      yield* eventually(timeline(id), (entries) => entries.length === 3, "the steered message is stored")
      yield* TestClock.adjust(Duration.seconds(1))
      const response = yield* fiber.await.pipe(Effect.flatten, Effect.orDie)
      expect(response.status).toBe(200)
      expect(response.body.resolution).toBe("steered")
      expect(response.body.messageIds).toEqual([])
      expect(doneOf(yield* first.ended).resolution).toBe("answered")
    })))
})

describe("rule 2: another origin, or typed text during a spoken turn, is never steered in", () => {
  it.scoped("a message from another surface waits and is answered as its own turn with its own origin", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* writingTurn(id, "person")
      const other = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "hello" }, { as: "cli-api" })
      yield* TestClock.adjust(Duration.seconds(1))
      const firstDone = doneOf(yield* first.ended)
      const otherDone = doneOf(yield* other.ended)
      expect(firstDone.resolution).toBe("answered")
      expect(otherDone.resolution).toBe("answered")
      expect(otherDone.taskId).not.toBe(firstDone.taskId)
      const [user] = otherDone.timeline.entries
      expect(user).toMatchObject({ origin: "cli-api", role: "user" })
      expect(textOf(otherDone.timeline.entries[1])).toBe("You said: hello")
      expect(textOf(firstDone.timeline.entries[1])).toBe("one two")
    })))

  it.scoped("typed text during a spoken turn waits", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const spoken = yield* writingTurn(id, "voice")
      const typed = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "typed" }, { as: "person" })
      yield* TestClock.adjust(Duration.seconds(1))
      const spokenDone = doneOf(yield* spoken.ended)
      const typedDone = doneOf(yield* typed.ended)
      expect(typedDone.resolution).toBe("answered")
      expect(typedDone.taskId).not.toBe(spokenDone.taskId)
      expect(typedDone.timeline.entries[0]).toMatchObject({ origin: "person", channel: "text" })
      expect(spokenDone.timeline.entries[0]).toMatchObject({ origin: "person", channel: "voice" })
    })))
})

describe("rule 3: the waiting route interrupts a running turn for a message with references", () => {
  it.scoped("the running reply is kept and labelled stopped; the new message is answered next", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const other = yield* conversation
      const first = yield* writingTurn(id)
      const response = yield* send(id, {
        text: "look at this",
        references: { version: 1, items: [{ kind: "conversation", id: other }] }
      }).pipe(Effect.orDie)
      expect(response.status).toBe(200)
      expect(response.body.resolution).toBe("answered")
      const firstDone = doneOf(yield* first.ended)
      expect(firstDone.resolution).toBe("stopped")
      const reply = firstDone.timeline.entries[1]
      expect(reply).toMatchObject({ status: "stopped", note: "Interrupted by a newer message." })
      expect(textOf(reply)).toBe("one ")
    })))

  it.scoped("on the streaming route the same message waits instead (rule 4: never a second prompt)", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const other = yield* conversation
      const first = yield* writingTurn(id)
      const second = yield* node.stream(`/conversations/${id}/messages/stream`, {
        text: "look at this",
        references: { version: 1, items: [{ kind: "conversation", id: other }] }
      })
      yield* TestClock.adjust(Duration.seconds(1))
      expect(doneOf(yield* first.ended).resolution).toBe("answered")
      expect(doneOf(yield* second.ended).resolution).toBe("answered")
    })))
})

describe("rule 5: a turn being set up is never stopped by a new message", () => {
  it.scoped("a message arriving before the first event waits for the turn, which completes", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "late" })
      const second = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "next" })
      yield* TestClock.adjust(Duration.seconds(1))
      const firstDone = doneOf(yield* first.ended)
      const secondDone = doneOf(yield* second.ended)
      expect(firstDone.resolution).toBe("answered")
      expect(textOf(firstDone.timeline.entries[1])).toBe("finally")
      expect(secondDone.resolution).toBe("answered")
      expect(textOf(secondDone.timeline.entries[1])).toBe("You said: next")
    })))
})

describe("rule 6: stop cancels every waiting message", () => {
  it.scoped("stop keeps the written text labelled stopped; waiting messages are saved with a cancelled card", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* writingTurn(id, "person")
      const waiting = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "queued" }, { as: "cli-api" })
      const client = yield* typedClient()
      expect(yield* client.conversations.stop({ path: { id }, payload: { source: "chat" } })).toEqual({ stopped: true })
      const firstDone = doneOf(yield* first.ended)
      expect(firstDone.resolution).toBe("stopped")
      expect(textOf(firstDone.timeline.entries[1])).toBe("one ")
      const waitingDone = doneOf(yield* waiting.ended)
      expect(waitingDone.resolution).toBe("cancelled")
      const entries = yield* timeline(id)
      const queued = entries.find((e) => textOf(e) === "queued")
      expect(queued).toMatchObject({ role: "user", origin: "cli-api" })
      expect(entries.at(-1)).toMatchObject({ role: "assistant", status: "cancelled", note: "Stopped before it started." })
      expect(yield* client.conversations.stop({ path: { id }, payload: {} })).toEqual({ stopped: false })
    })))

  it.scoped("emergency stop ends every turn in every conversation and reports the counts", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const ids = yield* Effect.all(Array.from({ length: 5 }, () => conversation))
      const streams = yield* Effect.forEach(ids, (id) => writingTurn(id))
      const waiting = yield* node.stream(`/conversations/${ids[0]}/messages/stream`, { text: "queued" }, { as: "cli-api" })
      const cli = yield* typedClient("cli-api")
      const stop = yield* cli.conversations.emergencyStop()
      expect(stop).toEqual({ stopped: { turns: 5, waiting: 1, jobs: 0, commands: 0 } })
      for (const stream of streams) expect(doneOf(yield* stream.ended).resolution).toBe("stopped")
      expect(doneOf(yield* waiting.ended).resolution).toBe("cancelled")
    })))

  // More turns than one checkpoint transaction takes during a stop (64), so their ends are stored over several.
  it.scoped("emergency stop of 70 turns stores every reply stopped with its text, as each done event says", () =>
    withNode(Effect.gen(function*() {
      const ids = yield* Effect.all(Array.from({ length: 70 }, () => conversation))
      const streams = yield* Effect.forEach(ids, (id) => writingTurn(id, "person", "forever"), { concurrency: "unbounded" })
      const cli = yield* typedClient("cli-api")
      expect(yield* cli.conversations.emergencyStop()).toEqual({ stopped: { turns: 70, waiting: 0, jobs: 0, commands: 0 } })
      for (const [i, stream] of streams.entries()) {
        const done = doneOf(yield* stream.ended)
        expect(done.resolution).toBe("stopped")
        const stored = yield* timeline(ids[i]!)
        expect(stored).toHaveLength(2)
        expect(stored[1]).toMatchObject({ role: "assistant", status: "stopped", note: "Stopped by the emergency stop." })
        expect(textOf(stored[1])).toBe("start ")
        expect(done.timeline.entries).toEqual(stored)
      }
    })))
})

describe("rule 7: references are re-checked on arrival", () => {
  it.scoped("a missing reference refuses the whole message with 400 naming it, storing nothing", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const ref = { kind: "conversation", id: "conv_gone" } as const
      const refused = yield* Effect.flip(send(id, { text: "see", references: { version: 1, items: [ref] } }))
      expect(refused).toMatchObject({ code: "REFERENCE_NOT_AVAILABLE", members: { reference: ref } })
      expect(yield* timeline(id)).toEqual([])
    })))

  it.scoped("more than 8 references is invalid input", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const items = Array.from({ length: 9 }, () => ({ kind: "conversation", id }))
      // The typed client would refuse to encode this; the node's own check is the point, so the request is raw.
      const response = yield* node.request("POST", `/conversations/${id}/messages`, {
        body: { text: "see", references: { version: 1, items } }
      })
      expect(response.status).toBe(400)
      expect(response.body.code).toBe("INVALID_INPUT")
      expect(yield* timeline(id)).toEqual([])
    })))
})

describe("rule 8: a single turn stops at the wall-clock limit", () => {
  it.scoped("after 5 minutes the reply is stopped with its text and a note", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "forever" })
      yield* stream.until(hasEvent("delta"))
      yield* TestClock.adjust(Duration.minutes(5))
      const done = doneOf(yield* stream.ended)
      expect(done.resolution).toBe("stopped")
      expect(done.timeline.entries[1]).toMatchObject({ status: "stopped", note: "Stopped after the 5m limit of a single turn." })
      expect(textOf(done.timeline.entries[1])).toBe("start ")
    })))

  it.scoped("each turn has its own 5 minutes from its start, and a turn that ended before takes none from the others", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const [early, later, short] = [yield* conversation, yield* conversation, yield* conversation]
      const path = (id: string) => `/conversations/${id}/messages/stream`
      const ended = yield* node.stream(path(short), { text: "slow" })
      const first = yield* node.stream(path(early), { text: "forever" })
      yield* first.until(hasEvent("delta"))
      yield* TestClock.adjust(Duration.seconds(1))
      expect(doneOf(yield* ended.ended).resolution).toBe("answered")
      yield* TestClock.adjust(Duration.minutes(2))
      const second = yield* node.stream(path(later), { text: "forever" })
      yield* second.until(hasEvent("delta"))
      // 5 minutes after the first turn's start: it stops, the second (started 2 minutes later) goes on.
      yield* TestClock.adjust(Duration.seconds(179))
      expect(doneOf(yield* first.ended).resolution).toBe("stopped")
      yield* TestClock.adjust(Duration.minutes(1))
      expect(second.events.map((e) => e.event)).not.toContain("done")
      expect((yield* timeline(later))[1]).toMatchObject({ status: "writing" })
      yield* TestClock.adjust(Duration.minutes(2))
      const done = doneOf(yield* second.ended)
      expect(done.resolution).toBe("stopped")
      expect(done.timeline.entries[1]).toMatchObject({ status: "stopped", note: "Stopped after the 5m limit of a single turn." })
    })))
})

describe("following turns", () => {
  it.scoped("a client that disconnects does not stop the turn", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const stream = yield* writingTurn(id)
      yield* stream.abort
      yield* TestClock.adjust(Duration.seconds(1))
      const entries = yield* eventually(timeline(id), (entries) => entries[1]?.status === "complete", "the reply completes")
      expect(entries[1]).toMatchObject({ status: "complete" })
      expect(textOf(entries[1])).toBe("one two")
    })))

  it.scoped("a client resumes with Last-Event-ID and gets every later event once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* writingTurn(id)
      const lastId = first.events.at(-1)!.id!
      yield* first.abort
      const resumed = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "ignored" }, {
        headers: { "last-event-id": lastId }
      })
      yield* TestClock.adjust(Duration.seconds(1))
      const events = yield* resumed.ended
      expect(events.map((e) => e.event)).toEqual(["delta", "done"])
      expect(events[0]!.data).toEqual({ text: "two" })
      expect(events[0]!.id).toBe(`${lastId.split(":")[0]}:${Number(lastId.split(":")[1]) + 1}`)
      // The resumed request did not submit a message.
      expect((yield* timeline(id)).filter((e) => e.role === "user")).toHaveLength(1)
    })))

  it.scoped("a retried submission with the same client request id never starts a second turn", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const body = { text: "hello", clientRequestId: "req-1" }
      const first = yield* send(id, body).pipe(Effect.orDie)
      const retry = yield* send(id, body).pipe(Effect.orDie)
      expect(retry.status).toBe(200)
      expect(retry.body.taskId).toBe(first.body.taskId)
      expect(retry.body.resolution).toBe("answered")
      expect(yield* timeline(id)).toHaveLength(2)
    })))

  it.scoped("several clients follow one turn", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const first = yield* writingTurn(id)
      const taskId = first.events[0]!.id!.split(":")[0]
      const followers = yield* Effect.forEach([1, 2, 3], () =>
        node.stream(`/conversations/${id}/messages/stream`, { text: "x" }, { headers: { "last-event-id": `${taskId}:0` } }))
      yield* Effect.forEach(followers, (f) => f.until(hasEvent("delta")))
      yield* TestClock.adjust(Duration.seconds(1))
      const all = yield* Effect.forEach([first, ...followers], (s) => s.ended)
      for (const events of all) expect(events.map((e) => e.event)).toEqual(["reasoning", "delta", "delta", "done"])
    })))
})

describe("typed app intents", () => {
  it.scoped("'open settings' is answered with an appIntent and never reaches the model", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const response = yield* send(id, { text: "Open settings" })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ resolution: "app-intent", taskId: null, appIntent: { kind: "open-settings" } })
      const entries = yield* timeline(id)
      expect(entries.map((e) => e.role)).toEqual(["user"])
    })))
})

describe("no model configured", () => {
  it.scoped("a message gets an error event telling how to configure one", () =>
    Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      expect((yield* client.conversations.node()).model).toBeNull()
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "hi" })
      const events = yield* stream.ended
      expect(events.map((e) => e.event)).toEqual(["error", "done"])
      expect(events[0]!.data.message).toMatch(/--model/)
      expect(doneOf(events).resolution).toBe("failed")
    }).pipe(Effect.provide(NodeServer.layer({ model: "none" }))))
})
