/** The Anthropic provider against a local server that speaks the Messages API's server-sent events. */
import { AnthropicClient } from "@effect/ai-anthropic"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Redacted, Schema } from "effect"
import type { ServerResponse } from "node:http"
import * as Anthropic from "../../../layers/node/model/Anthropic.js"
import {
  type ModelEvent,
  ModelFailure,
  collect,
  ModelProvider,
  type ModelRequest
} from "../../../services/node/ModelProvider.js"
import { useRecordingServer } from "../../support/RecordingServer.js"

const upstream = useRecordingServer("")

const decodeEvent = Schema.decodeUnknownEither(AnthropicClient.MessageStreamEvent)

/** Answers with these events as SSE; each is checked to be a valid event, in the test, before any request. */
const sse = (events: ReadonlyArray<Record<string, unknown>>) => {
  const frames = events.map((event) => {
    expect(Either.isRight(decodeEvent(event)), `fixture ${String(event["type"])} is a valid event`).toBe(true)
    return `event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`
  })
  return (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    for (const frame of frames) res.write(frame)
    res.end()
  }
}

// =============================================================================
// Fixtures
// =============================================================================

const messageStart = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [],
    model: "claude-test",
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 25, output_tokens: 1 }
  }
}
const delta = (index: number, d: Record<string, unknown>) => ({ type: "content_block_delta", index, delta: d })
const stop = (index: number) => ({ type: "content_block_stop", index })
const messageEnd = (stopReason: string) => [
  { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } },
  { type: "message_stop" }
]

const fullTurn = [
  messageStart,
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  delta(0, { type: "thinking_delta", thinking: "Let me " }),
  delta(0, { type: "thinking_delta", thinking: "think." }),
  delta(0, { type: "signature_delta", signature: "c2lnbmF0dXJl" }),
  stop(0),
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
  { type: "ping" },
  delta(1, { type: "text_delta", text: "Hel" }),
  delta(1, { type: "text_delta", text: "lo" }),
  delta(1, { type: "text_delta", text: " world" }),
  stop(1),
  {
    type: "content_block_start",
    index: 2,
    content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }
  },
  delta(2, { type: "input_json_delta", partial_json: "" }),
  delta(2, { type: "input_json_delta", partial_json: "{\"city\": " }),
  delta(2, { type: "input_json_delta", partial_json: "\"Paris\"}" }),
  stop(2),
  ...messageEnd("tool_use")
]

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"]
}

const request: ModelRequest = {
  messages: [
    { role: "system", text: "You are Clark." },
    { role: "user", text: "Weather in Lyon?" },
    {
      role: "assistant",
      text: "Let me look.",
      toolCalls: [{ id: "toolu_0", name: "get_weather", input: { city: "Lyon" } }]
    },
    { role: "tool", toolCallId: "toolu_0", name: "get_weather", output: { temp: 21 } },
    { role: "assistant", text: "21 degrees in Lyon.", toolCalls: [] },
    { role: "user", text: "And Paris?" }
  ],
  tools: [{ name: "get_weather", description: "Current weather of a city", inputSchema: weatherSchema }]
}

const key = "sk-ant-test-secret-5678"

const run = (req: ModelRequest, base: string = upstream.baseUrl) =>
  Effect.gen(function*() {
    const provider = yield* ModelProvider
    return yield* collect(provider, req)
  }).pipe(Effect.provide(Anthropic.layer({ model: "claude-test", apiKey: Redacted.make(key), baseUrl: base })))

const failure = <A>(effect: Effect.Effect<A, ModelFailure>) =>
  Effect.flip(effect).pipe(Effect.tap((error) => expect(error).toBeInstanceOf(ModelFailure)))

// =============================================================================
// Tests
// =============================================================================

describe("Anthropic", () => {
  it.live("streams thinking and text deltas in order and reports the tool call once, unexecuted", () =>
    Effect.gen(function*() {
      upstream.reply = sse(fullTurn)
      const events = yield* run(request)
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "ReasoningDelta", text: "Let me " },
        { _tag: "ReasoningDelta", text: "think." },
        { _tag: "TextDelta", text: "Hel" },
        { _tag: "TextDelta", text: "lo" },
        { _tag: "TextDelta", text: " world" },
        { _tag: "ToolCall", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }
      ])
      expect(upstream.received).toHaveLength(1)
    }))

  it.live("sends our messages, the tool definitions and the key as x-api-key", () =>
    Effect.gen(function*() {
      upstream.reply = sse(fullTurn)
      yield* run(request)
      const [sent] = upstream.received
      expect(sent?.method).toBe("POST")
      expect(sent?.url).toBe("/v1/messages")
      expect(sent?.headers["x-api-key"]).toBe(key)
      expect(sent?.headers.authorization).toBeUndefined()
      expect(sent?.headers["anthropic-version"]).toBe("2023-06-01")
      expect(sent?.body.model).toBe("claude-test")
      expect(sent?.body.stream).toBe(true)
      expect(sent?.body.max_tokens).toBe(4096)
      expect(sent?.body.system).toEqual([{ type: "text", text: "You are Clark." }])
      expect(sent?.body.messages).toEqual([
        { role: "user", content: [{ type: "text", text: "Weather in Lyon?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "toolu_0", name: "get_weather", input: { city: "Lyon" } }
          ]
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_0", content: "{\"temp\":21}", is_error: false }] },
        { role: "assistant", content: [{ type: "text", text: "21 degrees in Lyon." }] },
        { role: "user", content: [{ type: "text", text: "And Paris?" }] }
      ])
      expect(sent?.body.tools).toEqual([
        { name: "get_weather", description: "Current weather of a city", input_schema: weatherSchema }
      ])
      expect(sent?.body.tool_choice).toEqual({ type: "auto" })
    }))

  it.live("accepts a base URL ending in /v1", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        messageStart,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        delta(0, { type: "text_delta", text: "Hi" }),
        stop(0),
        ...messageEnd("end_turn")
      ])
      const events = yield* run({ messages: [{ role: "user", text: "Hello" }], tools: [] }, `${upstream.baseUrl}/v1/`)
      expect(events).toEqual([{ _tag: "TextDelta", text: "Hi" }])
      expect(upstream.received[0]?.url).toBe("/v1/messages")
      expect(upstream.received[0]?.body.tools).toBeUndefined()
    }))

  it.live("a 401 becomes a provider-error naming the status, without the key or the body", () =>
    Effect.gen(function*() {
      upstream.reply = (res) =>
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({
          type: "error",
          error: { type: "authentication_error", message: `invalid x-api-key ${key}` }
        }))
      const error = yield* failure(run(request))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("401")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("invalid x-api-key")
    }))

  it.live("a 500 becomes a provider-error without the body", () =>
    Effect.gen(function*() {
      upstream.reply = (res) => res.writeHead(500, { "content-type": "text/plain" }).end(`upstream exploded near ${key}`)
      const error = yield* failure(run(request))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("500")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("exploded")
    }))

  it.live("an error event in the stream fails after the deltas before it, with the error type only", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        messageStart,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        delta(0, { type: "text_delta", text: "Par" }),
        { type: "error", error: { type: "overloaded_error", message: `Overloaded, key ${key}` } }
      ])
      const seen: Array<ModelEvent> = []
      const error = yield* ModelProvider.pipe(
        Effect.flatMap((p) => p.run(request, (event) => void seen.push(event))),
        Effect.provide(Anthropic.layer({ model: "claude-test", apiKey: Redacted.make(key), baseUrl: upstream.baseUrl })),
        failure
      )
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Par" }])
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("overloaded_error")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("Overloaded,")
    }))

  it.live("a call to a tool that was not offered is a provider-error (the library cannot decode it)", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        messageStart,
        { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_9", name: "made_up", input: {} } },
        delta(0, { type: "input_json_delta", partial_json: "{}" }),
        stop(0),
        ...messageEnd("tool_use")
      ])
      const error = yield* failure(run(request))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("a tool that was not offered")
    }))

  it.effect("info names the provider and the model", () =>
    Effect.gen(function*() {
      const provider = yield* ModelProvider
      expect(provider.info).toEqual({ provider: "anthropic", name: "claude-test" })
    }).pipe(Effect.provide(Anthropic.layer({ model: "claude-test", apiKey: Redacted.make(key) }))))
})
