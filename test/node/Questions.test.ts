/**
 * Questions the assistant asks (tool `ask_user_question`), through the real
 * node server on the test clock: answer, cancel, expiry with its notice,
 * ask-again, and every refusal of the question routes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../layers/node/model/Scripted.js"
import * as NodeServer from "../support/NodeServer.js"
import { TestNode } from "../support/NodeServer.js"
import type { AnswerRequest as AnswerRequestSchema } from "../../schema/node/Conversation.js"

type AnswerRequest = typeof AnswerRequestSchema.Encoded
import { conversation, eventually, query, send, textOf, timeline, typedClient, wire } from "../support/NodeFixtures.js"

const questionTtl = Duration.minutes(10)

const script: ScriptInput = {
  rules: [
    {
      match: "colour",
      steps: [{
        question: {
          question: "Which colour?",
          options: [{ id: "r", label: "Red" }, { id: "b", label: "Blue" }]
        }
      }]
    },
    {
      match: "size",
      steps: [{
        question: {
          question: "Which size?",
          options: [{ id: "s", label: "Small" }, { id: "l", label: "Large" }],
          allowText: false
        }
      }]
    }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ script, turns: { questionTtl } }))

// ---------------------------------------------------------------------------
// Helpers

const questionBlocks = (entries: ReadonlyArray<any>) =>
  entries.flatMap((entry) => entry.blocks.filter((b: any) => b.type === "question").map((b: any) => ({ entry, block: b })))

const blockOf = (entries: ReadonlyArray<any>, questionId: string) =>
  questionBlocks(entries).find(({ block }) => block.questionId === questionId)

/** Sends a message on the waiting route that makes the script ask its question; returns the question id. */
const ask = (id: string) =>
  Effect.gen(function*() {
    const response = yield* send(id, { text: "pick a colour" })
    expect(response.status).toBe(200)
    const asked = questionBlocks(response.body.timeline.entries)
    expect(asked).toHaveLength(1)
    return asked[0]!.block.questionId as string
  })

/** A question route through the typed client, as status and body. */
const post = (id: string, questionId: string, action: "answer" | "cancel" | "ask-again", body?: AnswerRequest) =>
  Effect.gen(function*() {
    const client = yield* typedClient()
    const path = { id, questionId }
    const call = action === "answer"
      ? client.questions.answer({ path, payload: body ?? {}, withResponse: true })
      : action === "cancel"
      ? client.questions.cancel({ path, withResponse: true })
      : client.questions.askAgain({ path, withResponse: true })
    return yield* Effect.orDie(wire(call))
  })

/** Moves the test clock past the question lifetime until the question's block says expired. */
const expire = (id: string, questionId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 20; i++) {
      yield* TestClock.adjust(questionTtl)
      const block = blockOf(yield* timeline(id), questionId)
      // The timeline request is the wait: the expiry's writes run before the server reads it again.
      if (block?.block.status === "expired") return
    }
    return yield* Effect.dieMessage(`the question ${questionId} never expired`)
  })

// ---------------------------------------------------------------------------

describe("questions", () => {
  it.scoped("a question ends the turn open; answering with an option starts a new turn with its label", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "pick a colour" })
      expect(stream.status).toBe(200)
      const events = yield* stream.ended
      expect(events.map((e) => e.event)).toEqual(["tool-start", "tool-end", "done"])
      const [start, end, done] = events
      expect(start!.data).toMatchObject({ name: "ask_user_question", input: { question: "Which colour?" } })
      expect(end!.data).toMatchObject({ toolCallId: start!.data.toolCallId, name: "ask_user_question", status: "done" })
      const questionId = end!.data.output.questionId as string
      expect(questionId).toEqual(expect.any(String))
      expect(end!.data.output).toMatchObject({ status: "asked", question: "Which colour?" })

      expect(done!.data.resolution).toBe("answered")
      const reply = done!.data.timeline.entries.find((e: any) => e.role === "assistant")
      expect(reply.status).toBe("complete")
      expect(reply.blocks).toContainEqual({ type: "question", questionId, status: "open" })

      const answered = yield* post(id, questionId, "answer", { optionIds: ["r"] })
      expect(answered.status).toBe(200)
      expect(answered.body).toEqual({ questionId, status: "answered", taskId: expect.stringMatching(/^task_/) })
      const taskId = answered.body.taskId as string
      expect(taskId).not.toBe(done!.data.taskId)

      // The new turn: the person's answer as a user message, then its reply.
      const entries = yield* eventually(
        timeline(id),
        (entries) => entries.some((e) => e.taskId === taskId && e.role === "assistant" && e.status === "complete"),
        "the answer's turn completes"
      )
      const user = entries.find((e) => e.taskId === taskId && e.role === "user")
      expect(user).toMatchObject({ origin: "person", status: "complete" })
      expect(textOf(user)).toBe("Red")
      expect(textOf(entries.find((e) => e.taskId === taskId && e.role === "assistant"))).toBe("You said: Red")
      expect(blockOf(entries, questionId)!.block.status).toBe("answered")

      // Once answered, it stays answered: a second answer is refused and expiry no longer applies.
      const again = yield* post(id, questionId, "answer", { optionIds: ["b"] })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ code: "QUESTION_CLOSED", message: expect.any(String) })
      yield* TestClock.adjust(questionTtl)
      expect(blockOf(yield* timeline(id), questionId)!.block.status).toBe("answered")
      expect(query(node.dataDir, "SELECT * FROM notices WHERE subject_id = ?", questionId)).toEqual([])
      expect((yield* timeline(id)).filter((e) => e.role === "user").map(textOf)).toEqual(["pick a colour", "Red"])
    })))

  it.scoped("an open question can be cancelled once; a cancelled one cannot be answered", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const questionId = yield* ask(id)
      const cancelled = yield* post(id, questionId, "cancel")
      expect(cancelled.status).toBe(200)
      expect(cancelled.body).toMatchObject({ questionId, status: "cancelled" })
      expect(blockOf(yield* timeline(id), questionId)!.block.status).toBe("cancelled")

      const twice = yield* post(id, questionId, "cancel")
      expect(twice.status).toBe(409)
      expect(twice.body).toMatchObject({ code: "QUESTION_CLOSED", message: expect.any(String) })
      const answer = yield* post(id, questionId, "answer", { optionIds: ["r"] })
      expect(answer.status).toBe(409)
      expect(answer.body.code).toBe("QUESTION_CLOSED")
      const askAgain = yield* post(id, questionId, "ask-again")
      expect(askAgain.status).toBe(409)
      expect(askAgain.body.code).toBe("QUESTION_CLOSED")
      expect(yield* timeline(id)).toHaveLength(2)
    })))

  it.scoped("an unanswered question expires with a notice offering ask-again; ask-again re-asks it once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const questionId = yield* ask(id)

      // Still open before its time.
      yield* TestClock.adjust(Duration.subtract(questionTtl, Duration.seconds(1)))
      expect(blockOf(yield* timeline(id), questionId)!.block.status).toBe("open")
      const early = yield* post(id, questionId, "ask-again")
      expect(early.status).toBe(409)
      expect(early.body).toMatchObject({ code: "QUESTION_OPEN", message: expect.any(String) })

      yield* expire(id, questionId)
      const [stored] = query(node.dataDir, "SELECT status FROM questions WHERE id = ?", questionId)
      expect(stored.status).toBe("expired")
      const notices = query(node.dataDir, "SELECT * FROM notices WHERE subject_id = ?", questionId)
      expect(notices).toHaveLength(1)
      expect(notices[0]).toMatchObject({ conversation_id: id, state: "unread" })
      expect(JSON.parse(notices[0].data).actions).toContain("ask-again")

      // An expired question cannot be answered.
      const late = yield* post(id, questionId, "answer", { optionIds: ["r"] })
      expect(late.status).toBe(409)
      expect(late.body.code).toBe("QUESTION_CLOSED")

      const before = yield* timeline(id)
      const again = yield* post(id, questionId, "ask-again")
      expect(again.status).toBe(200)
      expect(again.body).toMatchObject({ questionId, status: "asked-again", askedAgainAs: expect.any(String) })
      const newId = again.body.askedAgainAs as string
      expect(newId).not.toBe(questionId)

      const after = yield* timeline(id)
      expect(after).toHaveLength(before.length + 1)
      expect(blockOf(after, questionId)!.block.status).toBe("asked-again")
      const asked = blockOf(after, newId)!
      expect(asked.block.status).toBe("open")
      expect(asked.entry).toMatchObject({ role: "assistant", hostWritten: { kind: "ask-again", version: 1 } })
      expect(asked.entry.messageId).not.toBe(blockOf(after, questionId)!.entry.messageId)
      expect(textOf(asked.entry)).toBe("Which colour?")
      const [copy] = query(node.dataDir, "SELECT prompt, status FROM questions WHERE id = ?", newId)
      expect(copy.status).toBe("open")
      expect(JSON.parse(copy.prompt)).toMatchObject({
        question: "Which colour?",
        options: [{ id: "r", label: "Red" }, { id: "b", label: "Blue" }]
      })

      const twice = yield* post(id, questionId, "ask-again")
      expect(twice.status).toBe(409)
      expect(twice.body).toMatchObject({ code: "ALREADY_ASKED_AGAIN", message: expect.any(String), askedAgainAs: newId })
      const open = yield* post(id, newId, "ask-again")
      expect(open.status).toBe(409)
      expect(open.body.code).toBe("QUESTION_OPEN")

      // The new question works like the first one.
      const answered = yield* post(id, newId, "answer", { optionIds: ["b"] })
      expect(answered.status).toBe(200)
      expect(answered.body).toMatchObject({ questionId: newId, status: "answered" })
      const closed = yield* post(id, newId, "ask-again")
      expect(closed.status).toBe(409)
      expect(closed.body).toMatchObject({ code: "QUESTION_CLOSED", message: expect.any(String) })
    })))

  it.scoped("unknown questions and questions of another conversation are 404 RESOURCE_NOT_FOUND", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const other = yield* conversation
      const questionId = yield* ask(id)
      for (const action of ["answer", "cancel", "ask-again"] as const) {
        const body = action === "answer" ? { optionIds: ["r"] } : undefined
        for (const [conversationId, qid] of [[id, "q_unknown"], [other, questionId], ["conv_unknown", questionId]]) {
          const response = yield* post(conversationId!, qid!, action, body)
          expect(response.status, `${action} ${conversationId}/${qid}`).toBe(404)
          expect(response.body).toMatchObject({ code: "RESOURCE_NOT_FOUND", message: expect.any(String) })
        }
      }
      // None of that touched the question.
      expect(blockOf(yield* timeline(id), questionId)!.block.status).toBe("open")
      expect(yield* timeline(other)).toEqual([])
    })))

  it.scoped("an option the question does not offer is 400 INVALID_INPUT and changes nothing", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const questionId = yield* ask(id)
      const before = yield* timeline(id)
      for (const optionIds of [["g"], ["r", "g"]]) {
        const response = yield* post(id, questionId, "answer", { optionIds })
        expect(response.status).toBe(400)
        expect(response.body).toMatchObject({ code: "INVALID_INPUT", message: expect.any(String) })
      }
      expect(yield* timeline(id)).toEqual(before)
      const [stored] = query(node.dataDir, "SELECT status FROM questions WHERE id = ?", questionId)
      expect(stored.status).toBe("open")
      // It can still be answered properly.
      const answered = yield* post(id, questionId, "answer", { optionIds: ["b"] })
      expect(answered.status).toBe(200)
    })))

  it.scoped("a question asked with allowText: false refuses a free-text answer with 400 INVALID_INPUT", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const response = yield* send(id, { text: "pick a size" })
      expect(response.status).toBe(200)
      const questionId = questionBlocks(response.body.timeline.entries)[0]!.block.questionId as string
      const [stored] = query(node.dataDir, "SELECT prompt FROM questions WHERE id = ?", questionId)
      expect(JSON.parse(stored.prompt)).toMatchObject({ allowText: false })

      const typed = yield* post(id, questionId, "answer", { text: "Enormous" })
      expect(typed.status).toBe(400)
      expect(typed.body).toMatchObject({ code: "INVALID_INPUT", message: expect.any(String) })
      expect(blockOf(yield* timeline(id), questionId)!.block.status).toBe("open")
      // Choosing one of its options still works.
      const chosen = yield* post(id, questionId, "answer", { optionIds: ["l"] })
      expect(chosen.status).toBe(200)
    })))

  it.scoped("answers sent at once: exactly one is accepted and one turn starts", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const questionId = yield* ask(id)
      const responses = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) => post(id, questionId, "answer", { optionIds: [i % 2 === 0 ? "r" : "b"] })),
        { concurrency: "unbounded" }
      )
      expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409])
      expect(responses.filter((r) => r.status === 409).every((r) => r.body.code === "QUESTION_CLOSED")).toBe(true)
      // The winner's message is stored before its 200 is sent.
      const users = (yield* timeline(id)).filter((e) => e.role === "user").map(textOf)
      expect(users).toHaveLength(2)
    })))
})
