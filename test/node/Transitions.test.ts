/**
 * Question and host-control transitions under concurrency: of N simultaneous calls on one question or control,
 * exactly one wins, even with a store that yields to other fibers before and after every statement (as a driver
 * with real I/O would). The engine runs on the real SQLite store of a real data dir, wrapped to yield.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Stream, TestClock } from "effect"
import * as Scripted from "../../layers/node/model/Scripted.js"
import * as NodeDatabase from "../../layers/node/sql/NodeDatabase.js"
import * as SqlAuditLog from "../../layers/node/sql/SqlAuditLog.js"
import { Composer } from "../../services/node/Composer.js"
import * as SqlConversationStore from "../../layers/node/sql/SqlConversationStore.js"
import * as SqlTransactions from "../../layers/node/sql/SqlTransactions.js"
import * as TurnEngineLive from "../../layers/node/TurnEngine.js"
import type { Caller } from "../../schema/node/Security.js"
import { ConversationStore } from "../../services/node/ConversationStore.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"
import * as NodeServer from "../support/NodeServer.js"

/** Every store call yields before it runs and before it returns. */
const yieldAround = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.yieldNow().pipe(Effect.zipRight(effect), Effect.tap(() => Effect.yieldNow()))

const YieldingStore = Layer.effect(
  ConversationStore,
  Effect.map(SqlConversationStore.make, (store) =>
    Object.fromEntries(
      Object.entries(store).map(([name, member]) => [
        name,
        Effect.isEffect(member)
          ? yieldAround(member as Effect.Effect<unknown>)
          : (...args: Array<unknown>) => yieldAround((member as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args))
      ])
    ) as unknown as ConversationStore["Type"])
)

const script = Scripted.decodeScript({
  rules: [
    { match: "colour", steps: [{ question: { question: "Which colour?", options: [{ id: "r", label: "Red" }] } }] },
    { match: "settings", steps: [{ hostControl: { action: "open-settings", tab: "models" } }] }
  ]
})

/** These turns carry no references: the composer (tested in test/node/composer) is not part of what is tested here. */
const noReferences = Layer.succeed(
  Composer,
  Composer.of({
    suggestions: () => Effect.dieMessage("no suggestions in this test"),
    resolve: (refs) => (refs.length === 0 ? Effect.succeed([]) : Effect.dieMessage("no references in this test"))
  })
)

const engineOn = (dataDir: string) =>
  TurnEngineLive.layer({ ...NodeServer.defaultTurns, questionTtl: Duration.hours(1) }).pipe(
    Layer.provideMerge(
      Layer.mergeAll(YieldingStore, SqlAuditLog.layer, SqlTransactions.layer, Scripted.fromScript(script), noReferences)
    ),
    Layer.provide(NodeDatabase.layer(dataDir))
  )

const person: Caller = { surface: "person", channel: "text" }
const calls = 10

/** A conversation whose last turn asked a question; its id and the question's. */
const askedQuestion = Effect.gen(function*() {
  const engine = yield* TurnEngine
  const store = yield* ConversationStore
  const conversation = yield* store.create("node_test", null)
  const ticket = yield* engine.submit({ conversationId: conversation.id, request: { text: "colour?" }, caller: person, route: "wait" })
  const result = yield* ticket.result
  const question = result.timeline.entries.flatMap((e) => e.blocks).find((b) => b.type === "question")
  if (question?.type !== "question") return yield* Effect.dieMessage("no question was asked")
  return { conversationId: conversation.id, questionId: question.questionId }
})

const outcomes = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>) =>
  Effect.map(Effect.all(effects.map(Effect.either), { concurrency: "unbounded" }), (all) => ({
    won: all.filter(Either.isRight).length,
    refused: all.flatMap((e) => (Either.isLeft(e) ? [(e.left as { _tag: string })._tag] : []))
  }))

describe("concurrent transitions", () => {
  it.scoped(`${calls} simultaneous answers to one question: one turn starts, the rest are QuestionClosed`, () =>
    Effect.gen(function*() {
      const engine = yield* TurnEngine
      const store = yield* ConversationStore
      const { conversationId, questionId } = yield* askedQuestion
      const result = yield* outcomes(
        Array.from({ length: calls }, (_, i) => engine.answerQuestion(conversationId, questionId, { text: `answer ${i}` }, person))
      )
      expect(result).toEqual({ won: 1, refused: Array(calls - 1).fill("QuestionClosed") })
      const { entries } = yield* store.timeline(conversationId, 0)
      expect(entries.filter((e) => e.role === "user").map((e) => e.blocks[0])).toHaveLength(2)
    }).pipe(Effect.provide(engineOn(NodeServer.makeDataDir()))))

  it.scoped(`${calls} simultaneous cancels and answers: exactly one of all of them wins`, () =>
    Effect.gen(function*() {
      const engine = yield* TurnEngine
      const { conversationId, questionId } = yield* askedQuestion
      const result = yield* outcomes([
        ...Array.from({ length: calls / 2 }, () => engine.cancelQuestion(conversationId, questionId)),
        ...Array.from({ length: calls / 2 }, () => engine.answerQuestion(conversationId, questionId, { optionIds: ["r"] }, person))
      ])
      expect(result.won).toBe(1)
      expect(result.refused).toEqual(Array(calls - 1).fill("QuestionClosed"))
    }).pipe(Effect.provide(engineOn(NodeServer.makeDataDir()))))

  it.scoped(`${calls} simultaneous ask-agains of an expired question: one new question, the rest AlreadyAskedAgain`, () =>
    Effect.gen(function*() {
      const engine = yield* TurnEngine
      const store = yield* ConversationStore
      const { conversationId, questionId } = yield* askedQuestion
      yield* TestClock.adjust(Duration.hours(1))
      const result = yield* outcomes(Array.from({ length: calls }, () => engine.askAgain(conversationId, questionId)))
      expect(result).toEqual({ won: 1, refused: Array(calls - 1).fill("AlreadyAskedAgain") })
      const open = yield* store.openQuestions
      expect(open).toHaveLength(1)
    }).pipe(Effect.provide(engineOn(NodeServer.makeDataDir()))))

  it.scoped(`${calls} simultaneous answers to one host-control: one recorded, the rest HostControlAnswered`, () =>
    Effect.gen(function*() {
      const engine = yield* TurnEngine
      const store = yield* ConversationStore
      const conversation = yield* store.create("node_test", null)
      const ticket = yield* engine.submit({
        conversationId: conversation.id,
        request: { text: "open settings please" },
        caller: person,
        route: "stream"
      })
      const event = yield* ticket.events.pipe(Stream.filter((e) => e.event === "host-control"), Stream.runHead)
      const controlId = (event.pipe((e) => e._tag === "Some" ? e.value.data : {}) as { controlId: string }).controlId
      const result = yield* outcomes(
        Array.from({ length: calls }, (_, i) => engine.answerHostControl(controlId, i % 2 === 0, `said ${i}`, person))
      )
      expect(result).toEqual({ won: 1, refused: Array(calls - 1).fill("HostControlAnswered") })
    }).pipe(Effect.provide(engineOn(NodeServer.makeDataDir()))))
})
