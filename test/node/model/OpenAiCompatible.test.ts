/**
 * The OpenAI-compatible provider against a local server that speaks the Responses API
 * (`POST /v1/responses`, server-sent events), which is what @effect/ai-openai 0.41 calls.
 */
import { OpenAiClient } from "@effect/ai-openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Redacted, Schema } from "effect"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as OpenAiCompatible from "../../../layers/node/model/OpenAiCompatible.js"
import {
  type ModelEvent,
  ModelFailure,
  collect,
  ModelProvider,
  type ModelRequest
} from "../../../services/node/ModelProvider.js"
import { firstEvent } from "../../support/ModelEvents.js"
import { useRecordingServer } from "../../support/RecordingServer.js"

const upstream = useRecordingServer("/v1")

const decodeEvent = Schema.decodeUnknownEither(OpenAiClient.ResponseStreamEvent)

/**
 * Answers with these events as SSE. Each must be a valid event (the client skips invalid ones silently),
 * which is checked here, in the test, before any request.
 */
const sse = (events: ReadonlyArray<Record<string, unknown>>) => {
  const frames = events.map((event, index) => {
    const withSequence = { ...event, sequence_number: index }
    expect(Either.isRight(decodeEvent(withSequence)), `fixture ${String(event["type"])} is a valid event`).toBe(true)
    return `event: ${String(event["type"])}\ndata: ${JSON.stringify(withSequence)}\n\n`
  })
  return (res: ServerResponse) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    for (const frame of frames) res.write(frame)
    res.end()
  }
}

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

// =============================================================================
// Fixtures
// =============================================================================

const response = (status: "in_progress" | "completed", output: ReadonlyArray<unknown>) => ({
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  status,
  error: null,
  incomplete_details: null,
  instructions: null,
  model: "test-model",
  output,
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: null,
  top_p: null
})

const reasoningItem = { type: "reasoning", id: "rs_1", summary: [] }
const messageItem = (text: string, status: "in_progress" | "completed") => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status,
  content: text.length === 0 ? [] : [{ type: "output_text", text, annotations: [] }]
})
const callItem = (args: string) => ({
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "get_weather",
  arguments: args
})

/** Raw reasoning (as Ollama / llama.cpp / vLLM send it), three text deltas, one tool call in two fragments. */
const fullTurn = [
  { type: "response.created", response: response("in_progress", []) },
  { type: "response.output_item.added", output_index: 0, item: reasoningItem },
  { type: "response.reasoning_text.delta", output_index: 0, content_index: 0, item_id: "rs_1", delta: "Thinking " },
  { type: "response.reasoning_text.delta", output_index: 0, content_index: 0, item_id: "rs_1", delta: "about it." },
  { type: "response.output_item.done", output_index: 0, item: reasoningItem },
  { type: "response.output_item.added", output_index: 1, item: messageItem("", "in_progress") },
  { type: "response.output_text.delta", output_index: 1, content_index: 0, item_id: "msg_1", delta: "Hel" },
  { type: "response.output_text.delta", output_index: 1, content_index: 0, item_id: "msg_1", delta: "lo" },
  { type: "response.output_text.delta", output_index: 1, content_index: 0, item_id: "msg_1", delta: " world" },
  { type: "response.output_item.done", output_index: 1, item: messageItem("Hello world", "completed") },
  { type: "response.output_item.added", output_index: 2, item: callItem("") },
  { type: "response.function_call_arguments.delta", output_index: 2, item_id: "fc_1", delta: "{\"city\":" },
  { type: "response.function_call_arguments.delta", output_index: 2, item_id: "fc_1", delta: "\"Paris\"}" },
  { type: "response.output_item.done", output_index: 2, item: callItem("{\"city\":\"Paris\"}") },
  {
    type: "response.completed",
    response: response("completed", [reasoningItem, messageItem("Hello world", "completed"), callItem("{\"city\":\"Paris\"}")])
  }
]

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"],
  additionalProperties: false
}

const request: ModelRequest = {
  messages: [
    { role: "system", text: "You are Clark." },
    { role: "user", text: "Weather in Lyon?" },
    { role: "assistant", text: "Let me look.", toolCalls: [{ id: "call_0", name: "get_weather", input: { city: "Lyon" } }] },
    { role: "tool", toolCallId: "call_0", name: "get_weather", output: { temp: 21 } },
    { role: "assistant", text: "21 degrees in Lyon.", toolCalls: [] },
    { role: "user", text: "And Paris?" }
  ],
  tools: [{ name: "get_weather", description: "Current weather of a city", inputSchema: weatherSchema }]
}

const key = "sk-test-secret-1234"

const run = (req: ModelRequest, options: { readonly apiKey?: Redacted.Redacted; readonly baseUrl?: string } = {}) =>
  Effect.gen(function*() {
    const provider = yield* ModelProvider
    return yield* collect(provider, req)
  }).pipe(
    Effect.provide(OpenAiCompatible.layer({
      baseUrl: options.baseUrl ?? upstream.baseUrl,
      model: "test-model",
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey })
    }))
  )

const failure = <A>(effect: Effect.Effect<A, ModelFailure>) =>
  Effect.flip(effect).pipe(Effect.tap((error) => expect(error).toBeInstanceOf(ModelFailure)))

// =============================================================================
// Tests
// =============================================================================

describe("OpenAiCompatible", () => {
  it.live("streams reasoning and text deltas in order and reports the tool call once, unexecuted", () =>
    Effect.gen(function*() {
      upstream.reply = sse(fullTurn)
      const events = yield* run(request, { apiKey: Redacted.make(key) })
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "ReasoningDelta", text: "Thinking " },
        { _tag: "ReasoningDelta", text: "about it." },
        { _tag: "TextDelta", text: "Hel" },
        { _tag: "TextDelta", text: "lo" },
        { _tag: "TextDelta", text: " world" },
        { _tag: "ToolCall", id: "call_1", name: "get_weather", input: { city: "Paris" } }
      ])
      // One request: the provider returned after the tool call instead of running it and asking again.
      expect(upstream.received).toHaveLength(1)
    }))

  it.live("sends our messages, the tool definitions and the key as a Bearer token", () =>
    Effect.gen(function*() {
      upstream.reply = sse(fullTurn)
      yield* run(request, { apiKey: Redacted.make(key) })
      const [sent] = upstream.received
      expect(sent?.method).toBe("POST")
      expect(sent?.url).toBe("/v1/responses")
      expect(sent?.headers.authorization).toBe(`Bearer ${key}`)
      expect(sent?.body.model).toBe("test-model")
      expect(sent?.body.stream).toBe(true)
      expect(sent?.body.input).toEqual([
        { role: "system", content: "You are Clark." },
        { role: "user", content: [{ type: "input_text", text: "Weather in Lyon?" }] },
        { role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
        { type: "function_call", call_id: "call_0", name: "get_weather", arguments: "{\"city\":\"Lyon\"}" },
        { type: "function_call_output", call_id: "call_0", output: "{\"temp\":21}" },
        { role: "assistant", content: [{ type: "output_text", text: "21 degrees in Lyon." }] },
        { role: "user", content: [{ type: "input_text", text: "And Paris?" }] }
      ])
      expect(sent?.body.tools).toEqual([{
        type: "function",
        name: "get_weather",
        description: "Current weather of a city",
        parameters: weatherSchema,
        strict: false
      }])
      expect(sent?.body.tool_choice).toBe("auto")
    }))

  it.live("delivers a delta while the response is still open, and stopping closes the request", () =>
    Effect.gen(function*() {
      let onClose = () => {}
      const closed = new Promise<void>((resolve) => {
        onClose = resolve
      })
      const events = [
        { type: "response.output_item.added", output_index: 0, item: messageItem("", "in_progress") },
        { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_1", delta: "first" }
      ]
      events.forEach((event, index) => expect(Either.isRight(decodeEvent({ ...event, sequence_number: index }))).toBe(true))
      upstream.reply = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        events.forEach((event, index) =>
          res.write(`data: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`)
        )
        // The response stays open: only the consumer can end this turn.
        res.on("close", () => onClose())
      }
      const first = yield* ModelProvider.pipe(
        Effect.flatMap((provider) => firstEvent(provider, { messages: [{ role: "user", text: "Hi" }], tools: [] })),
        Effect.provide(OpenAiCompatible.layer({ baseUrl: upstream.baseUrl, model: "test-model" }))
      )
      expect(first).toEqual(Option.some({ _tag: "TextDelta", text: "first" }))
      yield* Effect.promise(() => closed).pipe(Effect.timeout("5 seconds"))
    }))

  it.live("works without a key (Ollama, llama.cpp) and without tools", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        { type: "response.created", response: response("in_progress", []) },
        { type: "response.output_item.added", output_index: 0, item: messageItem("", "in_progress") },
        { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_1", delta: "Hi" },
        { type: "response.output_item.done", output_index: 0, item: messageItem("Hi", "completed") },
        { type: "response.completed", response: response("completed", [messageItem("Hi", "completed")]) }
      ])
      const events = yield* run({ messages: [{ role: "user", text: "Hello" }], tools: [] })
      expect(events).toEqual([{ _tag: "TextDelta", text: "Hi" }])
      expect(upstream.received[0]?.headers.authorization).toBeUndefined()
      expect(upstream.received[0]?.body.tools).toBeUndefined()
    }))

  it.live("passes a tool without properties as an empty object schema", () =>
    Effect.gen(function*() {
      upstream.reply = sse([{ type: "response.completed", response: response("completed", []) }])
      yield* run({
        messages: [{ role: "user", text: "What time is it?" }],
        tools: [{ name: "now", description: "Current time", inputSchema: {} }]
      })
      expect(upstream.received[0]?.body.tools).toEqual([{
        type: "function",
        name: "now",
        description: "Current time",
        parameters: { type: "object", properties: {} },
        strict: false
      }])
    }))

  it.live("OpenAI's reasoning summaries also arrive as ReasoningDelta", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        { type: "response.output_item.added", output_index: 0, item: reasoningItem },
        {
          type: "response.reasoning_summary_text.delta",
          output_index: 0,
          summary_index: 0,
          item_id: "rs_1",
          delta: "Summary."
        },
        { type: "response.output_item.done", output_index: 0, item: reasoningItem },
        { type: "response.completed", response: response("completed", [reasoningItem]) }
      ])
      const events = yield* run({ messages: [{ role: "user", text: "Think" }], tools: [] })
      expect(events).toEqual([{ _tag: "ReasoningDelta", text: "Summary." }])
    }))

  it.live("a 401 becomes a provider-error naming the status, without the key or the body", () =>
    Effect.gen(function*() {
      upstream.reply = json(401, { error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error" } })
      const error = yield* failure(run(request, { apiKey: Redacted.make(key) }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("401")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("Incorrect API key")
      expect(upstream.received[0]?.headers.authorization).toBe(`Bearer ${key}`)
    }))

  it.live("a 500 becomes a provider-error without the body", () =>
    Effect.gen(function*() {
      upstream.reply = (res) => res.writeHead(500, { "content-type": "text/plain" }).end(`stack trace with ${key} inside`)
      const error = yield* failure(run(request, { apiKey: Redacted.make(key) }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("500")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("stack trace")
    }))

  it.live("an error event in the stream fails after the deltas before it, with the code only", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        { type: "response.output_item.added", output_index: 0, item: messageItem("", "in_progress") },
        { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_1", delta: "Par" },
        { type: "error", code: "server_error", message: `Internal failure for key ${key}`, param: null }
      ])
      const provider = OpenAiCompatible.layer({ baseUrl: upstream.baseUrl, model: "test-model", apiKey: Redacted.make(key) })
      const seen: Array<ModelEvent> = []
      const error = yield* ModelProvider.pipe(
        Effect.flatMap((p) => p.run(request, (event) => void seen.push(event))),
        Effect.provide(provider),
        failure
      )
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Par" }])
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("server_error")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("Internal failure")
    }))

  it.live("response.failed is a failure, not a normal end", () =>
    Effect.gen(function*() {
      upstream.reply = sse([{
        type: "response.failed",
        response: { ...response("completed", []), status: "failed", error: { code: "server_error", message: "x" } }
      }])
      const error = yield* failure(run({ messages: [{ role: "user", text: "Hi" }], tools: [] }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("server_error")
    }))

  it.live("an unreachable server is a provider-error", () =>
    Effect.gen(function*() {
      const closed = createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
      const port = (closed.address() as AddressInfo).port
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.close(() => resolve())))
      const error = yield* failure(run(request, { baseUrl: `http://127.0.0.1:${port}/v1` }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain("Could not reach")
    }))

  it.effect("info names the provider and the model", () =>
    Effect.gen(function*() {
      const provider = yield* ModelProvider
      expect(provider.info).toEqual({ provider: "openai", name: "test-model" })
    }).pipe(Effect.provide(OpenAiCompatible.layer({ baseUrl: "http://127.0.0.1:1/v1", model: "test-model" }))))
})
