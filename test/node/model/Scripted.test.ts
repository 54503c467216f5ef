import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { decodeScript, fromScript, layer, type ScriptInput } from "../../../layers/node/model/Scripted.js"
import {
  collect,
  type ModelEvent,
  ModelFailure,
  type ModelMessage,
  ModelProvider
} from "../../../services/node/ModelProvider.js"

const providerOf = (script: ScriptInput) => ModelProvider.pipe(Effect.provide(fromScript(decodeScript(script))))

const user = (text: string): ModelMessage => ({ role: "user", text })

/** Every event the script answers to `messages`. */
const eventsOf = (script: ScriptInput, messages: ReadonlyArray<ModelMessage>) =>
  Effect.flatMap(providerOf(script), (provider) => collect(provider, { messages, tools: [] }))

const delta = (text: string): ModelEvent => ({ _tag: "TextDelta", text })

describe("Scripted model", () => {
  it.effect("writes deltas, reasoning and the echo of the user's text in order", () =>
    Effect.gen(function*() {
      const events = yield* eventsOf(
        { default: [{ reasoning: "thinking" }, { delta: "You said: " }, { echo: true }, { delta: "." }] },
        [user("hello there")]
      )
      expect(events).toEqual([
        { _tag: "ReasoningDelta", text: "thinking" },
        delta("You said: "),
        delta("hello there"),
        delta(".")
      ])
    }))

  it.effect("without a default, echoes the user's text after \"You said: \"", () =>
    Effect.gen(function*() {
      expect(yield* eventsOf({}, [user("hi")])).toEqual([delta("You said: "), delta("hi")])
    }))

  it.effect("picks the first rule whose regex matches the newest user text, ignoring case, else the default", () =>
    Effect.gen(function*() {
      const script: ScriptInput = {
        rules: [
          { match: "^weather", steps: [{ delta: "sunny" }] },
          { match: "time", steps: [{ delta: "noon" }] },
          { match: "^(time|weather)", steps: [{ delta: "never: an earlier rule matches first" }] }
        ],
        default: [{ delta: "default" }]
      }
      expect(yield* eventsOf(script, [user("Weather today?")])).toEqual([delta("sunny")])
      expect(yield* eventsOf(script, [user("what TIME is it")])).toEqual([delta("noon")])
      expect(yield* eventsOf(script, [user("time please")])).toEqual([delta("noon")])
      expect(yield* eventsOf(script, [user("how is the weather")])).toEqual([delta("default")])
      // Only the newest user message counts, not an earlier one or the assistant's text.
      expect(
        yield* eventsOf(script, [
          user("weather?"),
          { role: "assistant", text: "time", toolCalls: [] },
          user("something else")
        ])
      ).toEqual([delta("default")])
    }))

  it.effect("answers a tool result with the rule's `after` steps, and with nothing without a rule", () =>
    Effect.gen(function*() {
      const script: ScriptInput = {
        rules: [{ match: "^ask", steps: [{ question: { question: "Which?" } }], after: [{ delta: "thanks" }] }],
        default: [{ delta: "default" }]
      }
      const toolTurn = (text: string): ReadonlyArray<ModelMessage> => [
        user(text),
        { role: "assistant", text: "", toolCalls: [{ id: "call_1", name: "ask_user_question", input: {} }] },
        { role: "tool", toolCallId: "call_1", name: "ask_user_question", output: { answer: "this" } }
      ]
      expect(yield* eventsOf(script, toolTurn("ask me"))).toEqual([delta("thanks")])
      expect(yield* eventsOf(script, toolTurn("no rule matches"))).toEqual([])
      expect(yield* eventsOf({ rules: [{ match: "^ask", steps: [{ delta: "asked" }] }] }, toolTurn("ask me")))
        .toEqual([])
    }))

  it.effect("turns tool, question and hostControl steps into tool calls numbered call_1, call_2, …", () =>
    Effect.gen(function*() {
      const events = yield* eventsOf(
        {
          default: [
            { tool: { name: "read_file", input: { path: "a.txt" } } },
            { delta: "between" },
            { question: { question: "Which one?", options: ["a", "b"] } },
            { hostControl: { action: "open_url", url: "https://example.com" } }
          ]
        },
        [user("go")]
      )
      expect(events).toEqual([
        { _tag: "ToolCall", id: "call_1", name: "read_file", input: { path: "a.txt" } },
        delta("between"),
        { _tag: "ToolCall", id: "call_2", name: "ask_user_question", input: { question: "Which one?", options: ["a", "b"] } },
        { _tag: "ToolCall", id: "call_3", name: "host_control", input: { action: "open_url", url: "https://example.com" } }
      ])
    }))

  it.effect("an error step fails with script-error after the events before it, and nothing after", () =>
    Effect.gen(function*() {
      const provider = yield* providerOf({ default: [{ delta: "one" }, { error: "scripted failure" }, { delta: "two" }] })
      const events: Array<ModelEvent> = []
      const error = yield* Effect.flip(provider.run({ messages: [user("go")], tools: [] }, (e) => events.push(e)))
      expect(error).toBeInstanceOf(ModelFailure)
      expect(error.code).toBe("script-error")
      expect(error.message).toBe("scripted failure")
      expect(events).toEqual([delta("one")])
    }))

  it.effect("a delay step waits on the Effect clock", () =>
    Effect.gen(function*() {
      const provider = yield* providerOf({ default: [{ delta: "before" }, { delay: 1000 }, { delta: "after" }] })
      const events: Array<ModelEvent> = []
      const fiber = yield* Effect.fork(provider.run({ messages: [user("go")], tools: [] }, (e) => events.push(e)))
      yield* TestClock.adjust(999)
      expect(events).toEqual([delta("before")])
      yield* TestClock.adjust(1)
      expect(events).toEqual([delta("before"), delta("after")])
      yield* Fiber.join(fiber)
    }))

  it.effect("a stamp step writes the monotonic clock in nanoseconds when the delta is produced", () =>
    Effect.gen(function*() {
      const provider = yield* providerOf({ default: [{ stamp: true }, { delta: "x" }, { stamp: true }] })
      const before = process.hrtime.bigint()
      const events = yield* collect(provider, { messages: [user("go")], tools: [] })
      const after = process.hrtime.bigint()
      expect(events).toHaveLength(3)
      expect(events[1]).toEqual(delta("x"))
      const stamps = [events[0]!, events[2]!].map((event) => {
        expect(event._tag).toBe("TextDelta")
        const text = event._tag === "TextDelta" ? event.text : ""
        expect(text).toMatch(/^\d+$/)
        return BigInt(text)
      })
      expect(stamps[0]! >= before).toBe(true)
      expect(stamps[1]! >= stamps[0]!).toBe(true)
      expect(stamps[1]! <= after).toBe(true)
    }))

  it("decodeScript refuses unknown fields and malformed steps", () => {
    expect(() => decodeScript({ rules: [], extra: true })).toThrow()
    expect(() => decodeScript({ rules: [{ match: "x", steps: [], before: [] }] })).toThrow()
    expect(() => decodeScript({ default: [{ delta: "x", color: "red" }] })).toThrow()
    expect(() => decodeScript({ default: [{ stamp: false }] })).toThrow()
    expect(() => decodeScript({ default: [{ delay: -1 }] })).toThrow()
    expect(decodeScript({ default: [{ stamp: true }, { delay: 5 }] })).toEqual({
      rules: [],
      default: [{ stamp: true }, { delay: 5 }]
    })
    expect(decodeScript({ rules: [{ match: "x", steps: [] }] }).rules[0]?.after).toEqual([])
  })

  it.effect("matches rules case-insensitively, the same on every run; a pattern that is not one is refused at start", () =>
    Effect.gen(function*() {
      const script: ScriptInput = { rules: [{ match: "^burst", steps: [{ delta: "b" }] }], default: [{ delta: "d" }] }
      const provider = yield* providerOf(script)
      for (const text of ["Burst please", "burst", "not a burst", "BURST"]) {
        expect(yield* collect(provider, { messages: [user(text)], tools: [] })).toEqual([delta(text.toLowerCase().startsWith("burst") ? "b" : "d")])
      }
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clark-script-")), "script.json")
      fs.writeFileSync(file, JSON.stringify({ rules: [{ match: "(unclosed", steps: [] }] }))
      const refused = yield* Effect.exit(Effect.provide(ModelProvider, layer(file)))
      expect(Exit.isFailure(refused) ? String(Cause.squash(refused.cause)) : "").toContain("Cannot use the script")
    }))
})
