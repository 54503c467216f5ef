import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { ConversationNotFound } from "../../../services/node/ConversationErrors.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import { NodeIdentity } from "../../../services/node/Identity.js"
import { ModelProvider } from "../../../services/node/ModelProvider.js"
import { type Submission, TurnEngine } from "../../../services/node/TurnEngine.js"
import { Jobs } from "../../../services/node/Jobs.js"
import * as Sse from "../http/Sse.js"
import { wire } from "../http/Errors.js"

export const ConversationsLive = HttpApiBuilder.group(NodeApi, "conversations", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const engine = yield* TurnEngine
    const identity = yield* NodeIdentity
    const model = yield* ModelProvider

    const existing = (id: string) =>
      Effect.flatMap(store.get(id), Option.match({
        onNone: () => Effect.fail(new ConversationNotFound({ conversationId: id })),
        onSome: Effect.succeed
      }))

    // The per-request generators are made once, not per call: on Node 20 a generator function made per call gets a map
    // of its own, which keeps what it captured alive through scavenges until a full collection (docs/decisions.md).
    const send = Effect.fnUntraced(function*(id: string, payload: Submission["request"]) {
      const caller = yield* CurrentCaller
      const ticket = yield* engine.submit({ conversationId: id, request: payload, caller, route: "wait" })
      const result = yield* Effect.timeoutOption(ticket.result, engine.waitBudget)
      if (Option.isSome(result)) return result.value
      // Still running: the work continues in the background; the timeline shows it later.
      const timeline = yield* store.timeline(id, 0)
      return HttpServerResponse.unsafeJson({
        resolution: "background",
        taskId: ticket.taskId,
        messageIds: ticket.messageIds,
        timeline: { conversationId: id, ...timeline }
      }, { status: 202 })
    })
    const stream = Effect.fnUntraced(function*(id: string, payload: Submission["request"]) {
      const caller = yield* CurrentCaller
      const request = yield* HttpServerRequest.HttpServerRequest
      const lastEventId = request.headers["last-event-id"]
      const ticket = lastEventId !== undefined
        ? yield* engine.resume(id, lastEventId)
        : yield* engine.submit({ conversationId: id, request: payload, caller, route: "stream" })
      return yield* Sse.response(ticket)
    })
    const stop = Effect.fnUntraced(function*(id: string, source: Parameters<typeof engine.stop>[1]) {
      const caller = yield* CurrentCaller
      const stopped = yield* engine.stop(id, source, caller)
      return { stopped }
    })
    const emergencyStop = Effect.gen(function*() {
      const caller = yield* CurrentCaller
      // Jobs first: they end as cancelled by the stop, not failed by their services being stopped under them.
      const jobs = yield* Effect.flatMap(Jobs, (running) => running.stopAll("emergency-stop"))
      return { stopped: { ...(yield* engine.emergencyStop(caller)), jobs } }
    })

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
      .handle("send", ({ path, payload }) => send(path.id, payload).pipe(wire))
      .handle("stream", ({ path, payload }) => stream(path.id, payload).pipe(wire))
      .handle("stop", ({ path, payload }) => stop(path.id, payload.source ?? "api").pipe(wire))
      .handle("timeline", ({ path, urlParams }) =>
        Effect.gen(function*() {
          yield* existing(path.id)
          const timeline = yield* store.timeline(path.id, urlParams.after ?? 0)
          return { conversationId: path.id, ...timeline }
        }).pipe(wire))
      .handle("emergencyStop", () => emergencyStop)
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
