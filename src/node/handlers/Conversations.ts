import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { nodeError } from "../../../schema/node/Errors.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import { NodeIdentity } from "../../../services/node/Identity.js"
import { ModelProvider } from "../../../services/node/ModelProvider.js"
import { TurnEngine } from "../../../services/node/TurnEngine.js"
import * as Sse from "../http/Sse.js"
import type { ConversationError } from "../../../services/node/ConversationErrors.js"

/** Until the node's one mapping module (src/node/http/Errors.ts) lands: the conversation family on the wire. */
const toWire = (error: ConversationError) => {
  switch (error._tag) {
    case "ConversationNotFound":
      return nodeError("RESOURCE_NOT_FOUND", `No conversation ${error.conversationId}`)
    case "TurnNotFound":
      return nodeError("RESOURCE_NOT_FOUND", `No turn ${error.taskId} in this conversation`)
    case "LastEventIdInvalid":
      return nodeError("INVALID_INPUT", "Last-Event-ID must name an event of this conversation as <taskId>:<seq>", {
        field: "last-event-id"
      })
    case "ReferenceNotAvailable":
      return nodeError("REFERENCE_NOT_AVAILABLE", `The ${error.reference.kind} reference ${error.reference.id} is not available`, {
        reference: error.reference
      })
    case "QuestionNotFound":
      return nodeError("RESOURCE_NOT_FOUND", `No question ${error.questionId} in this conversation`)
    case "QuestionClosed":
      return nodeError("QUESTION_CLOSED", `The question ${error.questionId} is ${error.status}`)
    case "QuestionOpen":
      return nodeError("QUESTION_OPEN", `The question ${error.questionId} is still waiting`)
    case "AlreadyAskedAgain":
      return nodeError("ALREADY_ASKED_AGAIN", `The question ${error.questionId} was asked again`, {
        askedAgainAs: error.askedAgainAs
      })
    case "AnswerInvalid":
      return nodeError("INVALID_INPUT", {
        "text-not-allowed": "This question takes one of its options, not text",
        "unknown-option": "optionIds names an option the question does not offer",
        "empty": "The answer is empty"
      }[error.reason])
    case "HostControlNotFound":
      return nodeError("RESOURCE_NOT_FOUND", `No host-control ${error.controlId}`)
    case "HostControlAnswered":
      return nodeError("HOST_CONTROL_ANSWERED", `The host-control ${error.controlId} was already answered`)
  }
}
const wire = Effect.mapError(toWire)

export const ConversationsLive = HttpApiBuilder.group(NodeApi, "conversations", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const engine = yield* TurnEngine
    const identity = yield* NodeIdentity
    const model = yield* ModelProvider

    const existing = (id: string) =>
      Effect.flatMap(store.get(id), Option.match({
        onNone: () => Effect.fail(nodeError("RESOURCE_NOT_FOUND", `No conversation ${id}`)),
        onSome: Effect.succeed
      }))

    return handlers
      .handle("node", () =>
        Effect.succeed({
          nodeId: identity.nodeId,
          label: identity.label,
          fingerprint: identity.fingerprint,
          model: model.info
        }))
      .handle("list", () =>
        Effect.gen(function*() {
          const rows = yield* store.list
          const conversations = yield* Effect.forEach(rows, (row) =>
            Effect.map(engine.isRunning(row.conversationId), (running) => ({ ...row, running })))
          return { conversations }
        }))
      .handle("create", ({ payload }) =>
        Effect.map(store.create(identity.nodeId, payload.title ?? null), (c) => ({
          conversationId: c.id,
          homeNodeId: c.homeNodeId
        })))
      .handle("send", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const ticket = yield* engine.submit({ conversationId: path.id, request: payload, caller, route: "wait" })
          const result = yield* Effect.timeoutOption(ticket.result, engine.waitBudget)
          if (Option.isSome(result)) return result.value
          // Still running: the work continues in the background; the timeline shows it later.
          const timeline = yield* store.timeline(path.id, 0)
          return HttpServerResponse.unsafeJson({
            resolution: "background",
            taskId: ticket.taskId,
            messageIds: ticket.messageIds,
            timeline: { conversationId: path.id, ...timeline }
          }, { status: 202 })
        }).pipe(wire))
      .handle("stream", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const request = yield* HttpServerRequest.HttpServerRequest
          const lastEventId = request.headers["last-event-id"]
          const ticket = lastEventId !== undefined
            ? yield* engine.resume(path.id, lastEventId)
            : yield* engine.submit({ conversationId: path.id, request: payload, caller, route: "stream" })
          return yield* Sse.response(ticket.events)
        }).pipe(wire))
      .handle("stop", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const stopped = yield* engine.stop(path.id, payload.source ?? "api", caller)
          return { stopped }
        }).pipe(wire))
      .handle("timeline", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* existing(path.id)
          const timeline = yield* store.timeline(path.id, urlParams.after ?? 0)
          return { conversationId: path.id, ...timeline }
        }))
      .handle("emergencyStop", () =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          return { stopped: yield* engine.emergencyStop(caller) }
        }))
  }))

export const QuestionsLive = HttpApiBuilder.group(NodeApi, "questions", (handlers) =>
  Effect.gen(function*() {
    const engine = yield* TurnEngine
    return handlers
      .handle("answer", ({ path, payload }) =>
        Effect.flatMap(CurrentCaller, (caller) => engine.answerQuestion(path.id, path.questionId, payload, caller)).pipe(wire))
      .handle("cancel", ({ path }) => engine.cancelQuestion(path.id, path.questionId).pipe(wire))
      .handle("askAgain", ({ path }) => engine.askAgain(path.id, path.questionId).pipe(wire))
  }))

export const HostControlLive = HttpApiBuilder.group(NodeApi, "hostControl", (handlers) =>
  Effect.gen(function*() {
    const engine = yield* TurnEngine
    return handlers.handle("answer", ({ path, payload }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        yield* engine.answerHostControl(path.controlId, payload.ran, payload.say, caller)
        return { controlId: path.controlId, ran: payload.ran }
      }).pipe(wire))
  }))
