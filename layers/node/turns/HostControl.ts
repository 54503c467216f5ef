/**
 * The `host_control` tool: the agent asks the app to change something, and a
 * streamed turn waits a few seconds for the app's one answer per controlId.
 */
import { Deferred, type Duration, Effect, HashMap, Option, Ref, Schema } from "effect"
import type { Caller } from "../../../schema/node/Security.js"
import { makeId } from "../../../services/common/Ids.js"
import type { AuditLog } from "../../../services/node/AuditLog.js"
import { HostControlAnswered, HostControlNotFound } from "../../../services/node/ConversationErrors.js"
import type { ConversationStore } from "../../../services/node/ConversationStore.js"
import { replaceBlock, type Turn } from "./Turn.js"
import type { ToolOutcome } from "./Tools.js"

const HostControlInput = Schema.Struct({
  action: Schema.Literal("open-settings", "switch-model", "start-voice", "end-voice", "return-to-conversation"),
  tab: Schema.optional(Schema.String.pipe(Schema.maxLength(100))),
  model: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

interface Answer {
  readonly ran: boolean
  readonly say: string
}

export interface Options {
  readonly store: ConversationStore["Type"]
  readonly audit: AuditLog["Type"]
  /** How long a streamed turn waits for the app's answer before calling the action unconfirmed. */
  readonly wait: Duration.Duration
  readonly emit: (turn: Turn, data: unknown) => void
}

export const make = ({ audit, emit, store, wait }: Options) =>
  Effect.gen(function*() {
    /** The turns waiting for an answer, by controlId. */
    const waiting = yield* Ref.make(HashMap.empty<string, Deferred.Deferred<Answer>>())

    const run = (turn: Turn, input: unknown): Effect.Effect<ToolOutcome> =>
      Effect.gen(function*() {
        const decoded = Schema.decodeUnknownOption(HostControlInput)(input)
        if (Option.isNone(decoded)) return { status: "failed", output: { error: "invalid host-control" } }
        const action = decoded.value
        const controlId = yield* makeId("hc")
        const answer = yield* Deferred.make<Answer>()
        yield* Ref.update(waiting, HashMap.set(controlId, answer))
        yield* store.insertHostControl({
          id: controlId,
          conversationId: turn.conversationId,
          taskId: turn.taskId,
          action,
          status: "waiting"
        })
        yield* audit.append({
          kind: "host-control.asked",
          conversationId: turn.conversationId,
          surface: turn.origin,
          channel: turn.channel === "voice" ? "voice-agent" : turn.channel,
          detail: { controlId, action: action.action }
        })
        turn.blocks.push({ type: "host-control", controlId, action: action.action, status: "waiting" })
        emit(turn, { controlId, ...action })
        // The waiting route has no app to act on it, so it never waits for the answer.
        const answered = turn.route === "wait"
          ? Option.none<Answer>()
          : yield* Deferred.await(answer).pipe(Effect.timeoutOption(wait))
        yield* Ref.update(waiting, HashMap.remove(controlId))
        const status = Option.match(answered, {
          onNone: () => "unconfirmed" as const,
          onSome: ({ ran }) => (ran ? "ran" as const : "not-run" as const)
        })
        if (Option.isNone(answered)) yield* store.settleHostControl(controlId, "unconfirmed")
        replaceBlock(
          turn.blocks,
          (b) => b.type === "host-control" && b.controlId === controlId,
          { type: "host-control", controlId, action: action.action, status }
        )
        return {
          status: "done",
          output: Option.match(answered, {
            onNone: () => ({ controlId, status, note: "The app did not confirm the action." }),
            onSome: ({ say }) => ({ controlId, status, say })
          })
        }
      })

    /** The app's answer: recorded by a conditional write, so of concurrent answers exactly one wins. */
    const answer = (controlId: string, ran: boolean, say: string, caller: Caller) =>
      Effect.gen(function*() {
        const control = yield* store.hostControl(controlId)
        if (Option.isNone(control)) return yield* new HostControlNotFound({ controlId })
        const recorded = yield* store.answerHostControl(controlId, ran, say)
        if (!recorded) return yield* new HostControlAnswered({ controlId })
        const turn = HashMap.get(yield* Ref.get(waiting), controlId)
        if (Option.isSome(turn)) yield* Deferred.succeed(turn.value, { ran, say })
        yield* audit.append({
          kind: "host-control.answered",
          conversationId: control.value.conversationId,
          surface: caller.surface,
          channel: caller.channel,
          detail: { controlId, ran }
        })
      })

    return { run, answer }
  })
