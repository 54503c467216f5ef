/**
 * Host-control (tool `host_control`): the agent asks the app to change
 * something, the app answers once per controlId on a person-only route, and
 * without an answer the agent is told the action is unconfirmed. The waiting
 * route never waits for the answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { type SseEvent, TestNode } from "../support/NodeServer.js"
import { conversation, hasEvent, query, send, textOf, timeline, typedClient, wire } from "../support/NodeFixtures.js"

const hostControlWait = Duration.seconds(5)

const script: ScriptInput = {
  rules: [
    {
      match: "settings",
      steps: [{ hostControl: { action: "open-settings", tab: "models" } }],
      after: [{ delta: "Done." }]
    }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ script, turns: { hostControlWait } }))

// ---------------------------------------------------------------------------
// Helpers

const auditRows = (dataDir: string, kind: string): Array<any> =>
  query(dataDir, "SELECT * FROM audit_log WHERE kind = ? ORDER BY id", kind).map((row) => ({
    ...row,
    detail: JSON.parse(row.detail)
  }))

const eventOf = (events: ReadonlyArray<SseEvent>, name: string) => events.find((e) => e.event === name)!

const answer = (controlId: string, payload: { ran: boolean; say: string }, as: NodeServer.As = "person") =>
  Effect.flatMap(typedClient(as), (client) =>
    Effect.orDie(wire(client.hostControl.answer({ path: { controlId }, payload, withResponse: true }))))

/** A round trip to the server: whatever the clock woke has run and written by the time it answers. */
const roundTrip = Effect.flatMap(typedClient(), (client) => Effect.orDie(client.public.health()))

// ---------------------------------------------------------------------------

describe("host-control through the streaming route", () => {
  it.scoped("the app's answer continues the turn: tool-end says ran and the reply finishes", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "show me the model settings please" })
      expect(stream.status).toBe(200)
      const seen = yield* stream.until(hasEvent("host-control"))
      const control = eventOf(seen, "host-control").data
      expect(control).toMatchObject({ controlId: expect.any(String), action: "open-settings", tab: "models" })
      const controlId = control.controlId as string
      expect(seen.map((e) => e.event)).toEqual(["tool-start", "host-control"])
      expect(eventOf(seen, "tool-start").data).toMatchObject({ name: "host_control" })

      const answered = yield* answer(controlId, { ran: true, say: "Opened" })
      expect(answered.status).toBe(200)
      expect(answered.body).toEqual({ controlId, ran: true })

      const events = yield* stream.ended
      expect(events.map((e) => e.event)).toEqual(["tool-start", "host-control", "tool-end", "delta", "done"])
      const end = eventOf(events, "tool-end").data
      expect(end).toMatchObject({ name: "host_control", output: { controlId, status: "ran", say: "Opened" } })
      expect(eventOf(events, "delta").data).toEqual({ text: "Done." })
      const done = eventOf(events, "done").data
      expect(done.resolution).toBe("answered")
      const reply = done.timeline.entries.find((e: any) => e.role === "assistant")
      expect(reply.status).toBe("complete")
      expect(textOf(reply)).toBe("Done.")
      expect(reply.blocks).toContainEqual({ type: "host-control", controlId, action: "open-settings", status: "ran" })

      const twice = yield* answer(controlId, { ran: false, say: "again" })
      expect(twice.status).toBe(409)
      expect(twice.body).toMatchObject({ code: "HOST_CONTROL_ANSWERED", message: expect.any(String) })

      const answeredRows = auditRows(node.dataDir, "host-control.answered")
      expect(answeredRows).toHaveLength(1)
      expect(answeredRows[0]).toMatchObject({ surface: "person", channel: "text", detail: { controlId, ran: true } })
    })))

  it.scoped("an unknown controlId is 404 RESOURCE_NOT_FOUND", () =>
    withNode(Effect.gen(function*() {
      const response = yield* answer("hc_unknown", { ran: true, say: "Opened" })
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ code: "RESOURCE_NOT_FOUND", message: expect.any(String) })
    })))

  it.scoped("the cli-api surface cannot answer: 403 PERSON_ONLY, audited, and the control stays unanswered", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "show me the model settings please" })
      const controlId = eventOf(yield* stream.until(hasEvent("host-control")), "host-control").data.controlId as string

      const refused = yield* answer(controlId, { ran: true, say: "Opened" }, "cli-api")
      expect(refused.status).toBe(403)
      expect(refused.body).toMatchObject({ code: "PERSON_ONLY", message: expect.any(String) })
      const audit = auditRows(node.dataDir, "person-only.refused")
      expect(audit).toHaveLength(1)
      expect(audit[0]).toMatchObject({
        surface: "cli-api",
        detail: { method: "POST", path: `/app-intents/host-control/${controlId}` }
      })

      // The refusal answered nothing: the person can still answer.
      const answered = yield* answer(controlId, { ran: false, say: "Not now" })
      expect(answered.status).toBe(200)
      const events = yield* stream.ended
      expect(eventOf(events, "tool-end").data.output).toMatchObject({ controlId, status: "not-run", say: "Not now" })
      expect(auditRows(node.dataDir, "host-control.answered")).toHaveLength(1)
    })))

  it.scoped("without an answer within the wait the action is unconfirmed and the turn finishes", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "show me the model settings please" })
      const controlId = eventOf(yield* stream.until(hasEvent("host-control")), "host-control").data.controlId as string

      // Not yet: just under the wait, the turn is still waiting for the app.
      yield* TestClock.adjust(Duration.subtract(hostControlWait, Duration.millis(1)))
      yield* roundTrip
      expect(stream.events.map((e) => e.event)).toEqual(["tool-start", "host-control"])

      for (let i = 0; i < 20 && !hasEvent("done")(stream.events); i++) {
        yield* TestClock.adjust(hostControlWait)
        yield* roundTrip
      }
      const events = yield* stream.ended
      expect(events.map((e) => e.event)).toEqual(["tool-start", "host-control", "tool-end", "delta", "done"])
      expect(eventOf(events, "tool-end").data.output).toMatchObject({ controlId, status: "unconfirmed" })
      const reply = eventOf(events, "done").data.timeline.entries.find((e: any) => e.role === "assistant")
      expect(reply.status).toBe("complete")
      expect(textOf(reply)).toBe("Done.")
      expect(reply.blocks).toContainEqual({ type: "host-control", controlId, action: "open-settings", status: "unconfirmed" })

      // A late answer is the control's first and only answer: recorded, but it finds nobody waiting and changes
      // nothing in the reply.
      const late = yield* answer(controlId, { ran: true, say: "Opened" })
      expect(late.status).toBe(200)
      expect(auditRows(node.dataDir, "host-control.answered")).toHaveLength(1)
      const stored = (yield* timeline(id)).find((e) => e.role === "assistant")
      expect(stored.blocks).toContainEqual({ type: "host-control", controlId, action: "open-settings", status: "unconfirmed" })
    })))
})

describe("host-control through the waiting route", () => {
  it.scoped("POST /messages never waits for the answer: 200 at once with the block unconfirmed", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      // No clock adjustment anywhere in this test.
      const response = yield* send(id, { text: "show me the model settings please" })
      expect(response.status).toBe(200)
      expect(response.body.resolution).toBe("answered")
      const reply: any = response.body.timeline.entries.find((e) => e.role === "assistant")
      expect(reply.status).toBe("complete")
      const control = reply.blocks.find((b: any) => b.type === "host-control")
      expect(control).toMatchObject({ action: "open-settings", status: "unconfirmed" })
      const tool = reply.blocks.find((b: any) => b.type === "tool")
      expect(tool).toMatchObject({ name: "host_control", status: "done", output: { status: "unconfirmed" } })
      expect(textOf(reply)).toBe("Done.")
    })))

  it.scoped("a voice turn records the agent's host-control request with channel voice-agent", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const spoken = yield* send(id, { text: "show me the model settings please" }, "voice")
      expect(spoken.status).toBe(200)
      const user = spoken.body.timeline.entries.find((e: any) => e.role === "user")
      expect(user).toMatchObject({ origin: "person", channel: "voice" })
      const typed = yield* send(id, { text: "show me the model settings please" })
      expect(typed.status).toBe(200)

      const asked = auditRows(node.dataDir, "host-control.asked")
      expect(asked).toHaveLength(2)
      expect(asked[0]).toMatchObject({
        conversation_id: id,
        surface: "person",
        channel: "voice-agent",
        detail: { action: "open-settings" }
      })
      expect(asked[1]).toMatchObject({ conversation_id: id, surface: "person", channel: "text" })
      // The person's own spoken message stays `voice`, apart from what the agent asked for.
      const messages = auditRows(node.dataDir, "message")
      expect(messages[0]).toMatchObject({ channel: "voice" })
    })))
})
