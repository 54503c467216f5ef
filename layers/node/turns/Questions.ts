/**
 * The `ask_user_question` tool and the life of a question: answered (which
 * starts a new turn), cancelled, expired (with a notice offering ask-again) or
 * asked again. Every transition is a conditional write in the store, so of
 * concurrent calls on one question exactly one wins.
 */
import { Clock, DateTime, Duration, Effect, FiberMap, Option, Schema } from "effect"
import type { Caller } from "../../../schema/node/Security.js"
import { makeId } from "../../../services/common/Ids.js"
import {
  AlreadyAskedAgain,
  AnswerInvalid,
  type ConversationNotFound,
  QuestionClosed,
  QuestionNotFound,
  QuestionOpen,
  type ReferenceNotAvailable
} from "../../../services/node/ConversationErrors.js"
import type { ConversationStore, Question, QuestionPrompt, QuestionStatus } from "../../../services/node/ConversationStore.js"
import type { QuestionAnswer, QuestionOutcome, Submission, Ticket } from "../../../services/node/TurnEngine.js"
import type { ToolOutcome } from "./Tools.js"
import type { Turn } from "./Turn.js"

const QuestionInput = Schema.Struct({
  question: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
  options: Schema.optionalWith(
    Schema.Array(Schema.Struct({ id: Schema.String.pipe(Schema.maxLength(200)), label: Schema.String.pipe(Schema.maxLength(500)) }))
      .pipe(Schema.maxItems(20)),
    { default: () => [] }
  ),
  allowText: Schema.optionalWith(Schema.Boolean, { default: () => true })
})

export interface Options {
  readonly store: ConversationStore["Type"]
  readonly ttl: Duration.Duration
  readonly requireConversation: (conversationId: string) => Effect.Effect<void, ConversationNotFound>
  /** Starts the turn of an answer: the engine's own submit. */
  readonly submit: (submission: Submission) => Effect.Effect<Ticket, ConversationNotFound | ReferenceNotAvailable>
}

const closedAs = (status: QuestionStatus) => (status === "open" ? "answered" : status)

export const make = ({ requireConversation, store, submit, ttl }: Options) =>
  Effect.gen(function*() {
    const expiries = yield* FiberMap.make<string>()

    const expiryFromNow = Effect.map(
      Clock.currentTimeMillis,
      (now) => DateTime.formatIso(DateTime.unsafeMake(now + Duration.toMillis(ttl)))
    )

    /** Changes the question block of the message that asked it. */
    const markBlock = (question: Question, status: QuestionStatus) =>
      Effect.gen(function*() {
        const message = yield* store.message(question.messageId)
        if (Option.isNone(message)) return
        const blocks = message.value.blocks.map((b) =>
          b.type === "question" && b.questionId === question.id ? { ...b, status } : b
        )
        yield* store.updateMessage(question.conversationId, question.messageId, { blocks })
      })

    const expire = (questionId: string) =>
      Effect.gen(function*() {
        const question = yield* store.question(questionId)
        if (Option.isNone(question)) return
        if (!(yield* store.transitionQuestion(questionId, ["open"], { status: "expired" }))) return
        yield* markBlock(question.value, "expired")
        yield* store.insertNotice({
          kind: "question-expired",
          conversationId: question.value.conversationId,
          subjectId: questionId,
          data: { question: question.value.prompt.question, actions: ["ask-again", "dismiss"] }
        })
      })

    const scheduleExpiry = (questionId: string, expiresAt: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const wait = Math.max(0, Date.parse(expiresAt) - now)
        yield* FiberMap.run(expiries, questionId, Effect.andThen(Effect.sleep(Duration.millis(wait)), expire(questionId)))
      })

    /** The tool: stores the question on the turn's reply and ends the turn. */
    const ask = (turn: Turn, input: unknown): Effect.Effect<ToolOutcome> =>
      Effect.gen(function*() {
        const decoded = Schema.decodeUnknownOption(QuestionInput)(input)
        if (Option.isNone(decoded)) return { status: "failed", output: { error: "invalid question" } }
        const prompt: QuestionPrompt = decoded.value
        const questionId = yield* makeId("q")
        const expiresAt = yield* expiryFromNow
        yield* store.insertQuestion({
          id: questionId,
          conversationId: turn.conversationId,
          messageId: turn.assistantMessageId,
          taskId: turn.taskId,
          prompt,
          status: "open",
          expiresAt,
          askedAgainAs: null
        })
        turn.blocks.push({ type: "question", questionId, status: "open" })
        yield* scheduleExpiry(questionId, expiresAt)
        return { status: "done", output: { questionId, status: "asked", ...prompt, expiresAt }, endsTurn: true }
      })

    const questionIn = (conversationId: string, questionId: string) =>
      Effect.flatMap(requireConversation(conversationId), () =>
        Effect.flatMap(
          store.question(questionId),
          (question): Effect.Effect<Question, QuestionNotFound> =>
            Option.isSome(question) && question.value.conversationId === conversationId
              ? Effect.succeed(question.value)
              : Effect.fail(new QuestionNotFound({ conversationId, questionId }))
        ))

    /** Why a transition from `open` lost: the question as it is now. */
    const lostTo = (question: Question) =>
      Effect.flatMap(store.question(question.id), (now) =>
        Effect.fail(
          new QuestionClosed({
            questionId: question.id,
            status: closedAs(Option.match(now, { onNone: () => question.status, onSome: (q) => q.status }))
          })
        ))

    const answer = (conversationId: string, questionId: string, given: QuestionAnswer, caller: Caller) =>
      Effect.gen(function*() {
        const question = yield* questionIn(conversationId, questionId)
        if (question.status !== "open") return yield* new QuestionClosed({ questionId, status: closedAs(question.status) })
        const text = given.text !== undefined && given.text.length > 0 ? given.text : undefined
        if (!question.prompt.allowText && text !== undefined) {
          return yield* new AnswerInvalid({ questionId, reason: "text-not-allowed" })
        }
        const chosen = question.prompt.options.filter((o) => given.optionIds?.includes(o.id))
        if ((given.optionIds ?? []).length !== chosen.length) {
          return yield* new AnswerInvalid({ questionId, reason: "unknown-option" })
        }
        const composed = [
          ...chosen.map((o) => o.label),
          ...(text === undefined ? [] : [text]),
          ...(given.confirmed === undefined ? [] : [given.confirmed ? "Yes" : "No"])
        ].join("\n")
        if (composed.length === 0) return yield* new AnswerInvalid({ questionId, reason: "empty" })
        if (!(yield* store.transitionQuestion(questionId, ["open"], { status: "answered" }))) return yield* lostTo(question)
        yield* markBlock(question, "answered")
        yield* FiberMap.remove(expiries, questionId)
        const ticket = yield* submit({ conversationId, request: { text: composed }, caller, route: "answer" })
        return {
          questionId,
          status: "answered",
          ...(ticket.taskId === null ? {} : { taskId: ticket.taskId })
        } satisfies QuestionOutcome
      })

    const cancel = (conversationId: string, questionId: string) =>
      Effect.gen(function*() {
        const question = yield* questionIn(conversationId, questionId)
        if (question.status !== "open") return yield* new QuestionClosed({ questionId, status: closedAs(question.status) })
        if (!(yield* store.transitionQuestion(questionId, ["open"], { status: "cancelled" }))) return yield* lostTo(question)
        yield* markBlock(question, "cancelled")
        yield* FiberMap.remove(expiries, questionId)
        return { questionId, status: "cancelled" } satisfies QuestionOutcome
      })

    /** Why ask-again is refused for a question in `status`; undefined when it may be asked again. */
    const refusal = (question: Question, status: QuestionStatus, askedAgainAs: string | null) => {
      switch (status) {
        case "open":
          return new QuestionOpen({ questionId: question.id })
        case "answered":
        case "cancelled":
          return new QuestionClosed({ questionId: question.id, status })
        case "asked-again":
          return new AlreadyAskedAgain({ questionId: question.id, askedAgainAs: askedAgainAs ?? "" })
        case "expired":
          return undefined
      }
    }

    const askAgain = (conversationId: string, questionId: string) =>
      Effect.gen(function*() {
        const question = yield* questionIn(conversationId, questionId)
        const refused = refusal(question, question.status, question.askedAgainAs)
        if (refused !== undefined) return yield* refused
        const newId = yield* makeId("q")
        if (!(yield* store.transitionQuestion(questionId, ["expired"], { status: "asked-again", askedAgainAs: newId }))) {
          const now = Option.getOrElse(yield* store.question(questionId), () => question)
          return yield* (refusal(question, now.status, now.askedAgainAs) ?? new QuestionClosed({ questionId, status: "expired" }))
        }
        const expiresAt = yield* expiryFromNow
        const message = yield* store.insertMessage({
          conversationId,
          role: "assistant",
          origin: null,
          channel: null,
          status: "complete",
          taskId: question.taskId,
          hostWritten: { kind: "ask-again", version: 1 },
          blocks: [{ type: "text", text: question.prompt.question }, { type: "question", questionId: newId, status: "open" }]
        })
        yield* store.insertQuestion({
          ...question,
          id: newId,
          messageId: message.messageId,
          status: "open",
          expiresAt,
          askedAgainAs: null
        })
        yield* markBlock(question, "asked-again")
        yield* scheduleExpiry(newId, expiresAt)
        return { questionId, status: "asked-again", askedAgainAs: newId } satisfies QuestionOutcome
      })

    /** At start-up: the open questions' expiry timers. */
    const resumeExpiries = Effect.flatMap(
      store.openQuestions,
      (open) => Effect.forEach(open, (q) => scheduleExpiry(q.id, q.expiresAt), { discard: true })
    )

    return { ask, answer, cancel, askAgain, resumeExpiries }
  })
