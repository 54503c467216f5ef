/**
 * The Chat Completions provider against a local server that speaks that protocol: `POST /v1/chat/completions`
 * with `stream: true`, answered as server-sent events `data: {chunk}` and a final `data: [DONE]`, the way
 * OpenAI, Ollama, llama.cpp and vLLM send them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as OpenAiChat from "../../../layers/node/model/OpenAiChat.js"
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

// =============================================================================
// Frames
// =============================================================================

/** One `chat.completion.chunk` as the servers send it (llama.cpp's shape: every envelope field present). */
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "test-model",
  system_fingerprint: "b1",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }]
})

const first = chunk({ role: "assistant", content: null })
const done = "[DONE]"

/** Answers with these frames as SSE `data:` lines (objects as JSON, strings as they are), then closes. */
const sse = (frames: ReadonlyArray<Record<string, unknown> | string>) => (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const frame of frames) res.write(`data: ${typeof frame === "string" ? frame : JSON.stringify(frame)}\n\n`)
  res.end()
}

const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

const plainReply = [
  first,
  chunk({ content: "Hel" }),
  chunk({ content: "lo" }),
  chunk({ content: " world" }),
  chunk({}, "stop"),
  done
]

/** Two tool calls at indexes 0 and 1, each split over several chunks, as OpenAI streams them. */
const toolReply = [
  first,
  chunk({ content: "Checking both." }),
  chunk({
    tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }]
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"ci" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "ty\":\"Paris\"}" } }] }),
  chunk({
    tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "get_weather", arguments: "{\"city\"" } }]
  }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: ":\"Lyon\"}" } }] }),
  chunk({}, "tool_calls"),
  done
]

// =============================================================================
// Fixtures
// =============================================================================

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
    { role: "assistant", text: "", toolCalls: [{ id: "call_1", name: "get_weather", input: { city: "Nice" } }] },
    { role: "tool", toolCallId: "call_1", name: "get_weather", output: "sunny" },
    { role: "assistant", text: "21 degrees in Lyon, sunny in Nice.", toolCalls: [] },
    { role: "assistant", text: "", toolCalls: [] },
    { role: "user", text: "And Paris?" }
  ],
  tools: [{ name: "get_weather", description: "Current weather of a city", inputSchema: weatherSchema }]
}

const hello: ModelRequest = { messages: [{ role: "user", text: "Hello" }], tools: [] }

const key = "sk-test-secret-1234"

const layer = (options: { readonly apiKey?: Redacted.Redacted; readonly baseUrl?: string } = {}) =>
  OpenAiChat.layer({
    baseUrl: options.baseUrl ?? upstream.baseUrl,
    model: "test-model",
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey })
  })

const run = (req: ModelRequest, options: { readonly apiKey?: Redacted.Redacted; readonly baseUrl?: string } = {}) =>
  Effect.gen(function*() {
    const provider = yield* ModelProvider
    return yield* collect(provider, req)
  }).pipe(Effect.provide(layer(options)))

/** Runs to the end, keeping what arrived before a failure. */
const runUntilFailure = (req: ModelRequest, options: { readonly apiKey?: Redacted.Redacted } = {}) =>
  Effect.gen(function*() {
    const seen: Array<ModelEvent> = []
    const provider = yield* ModelProvider
    const error = yield* Effect.flip(
      provider.run(req, (event) => void seen.push(event))
    )
    expect(error).toBeInstanceOf(ModelFailure)
    return { seen, error }
  }).pipe(Effect.provide(layer(options)))

const failure = <A>(effect: Effect.Effect<A, ModelFailure>) =>
  Effect.flip(effect).pipe(Effect.tap((error) => expect(error).toBeInstanceOf(ModelFailure)))

const serverLabel = () => `model server at ${upstream.baseUrl}`

// =============================================================================
// Tests
// =============================================================================

describe("OpenAiChat", () => {
  it.live("streams text deltas in order and ends at the finish", () =>
    Effect.gen(function*() {
      upstream.reply = sse(plainReply)
      const events = yield* run(hello)
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "TextDelta", text: "Hel" },
        { _tag: "TextDelta", text: "lo" },
        { _tag: "TextDelta", text: " world" }
      ])
      expect(upstream.received).toHaveLength(1)
    }))

  it.live("reasoning_content (llama.cpp, vLLM) and reasoning (Ollama) become ReasoningDelta, before the text", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        first,
        chunk({ reasoning_content: "Thinking " }),
        chunk({ reasoning_content: "about it." }),
        chunk({ reasoning: " Still thinking." }),
        // A server that sends both names for the same piece: reported once.
        chunk({ reasoning_content: " Done.", reasoning: " Done." }),
        chunk({ content: "Answer", reasoning_content: null }),
        chunk({}, "stop"),
        done
      ])
      const events = yield* run(hello)
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "ReasoningDelta", text: "Thinking " },
        { _tag: "ReasoningDelta", text: "about it." },
        { _tag: "ReasoningDelta", text: " Still thinking." },
        { _tag: "ReasoningDelta", text: " Done." },
        { _tag: "TextDelta", text: "Answer" }
      ])
    }))

  it.live("assembles tool calls split over several chunks and reports each once, by index, at the end", () =>
    Effect.gen(function*() {
      upstream.reply = sse(toolReply)
      const events = yield* run(request)
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "TextDelta", text: "Checking both." },
        { _tag: "ToolCall", id: "call_a", name: "get_weather", input: { city: "Paris" } },
        { _tag: "ToolCall", id: "call_b", name: "get_weather", input: { city: "Lyon" } }
      ])
      // One request: the provider returned the calls instead of running them and asking again.
      expect(upstream.received).toHaveLength(1)
    }))

  it.live("interleaved fragments, a tool without arguments, and a server that leaves out index and id", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        chunk({ tool_calls: [{ index: 1, id: "call_b", function: { name: "now", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, id: "call_a", function: { name: "get_weather", arguments: "{\"city\":" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Oslo\"}" } }] }),
        chunk({}, "tool_calls"),
        done
      ])
      const events = yield* run(request)
      expect(events).toEqual<Array<ModelEvent>>([
        { _tag: "ToolCall", id: "call_a", name: "get_weather", input: { city: "Oslo" } },
        { _tag: "ToolCall", id: "call_b", name: "now", input: {} }
      ])

      upstream.reply = sse([chunk({ tool_calls: [{ function: { name: "now", arguments: "{}" } }] }, "tool_calls"), done])
      const [call, ...rest] = yield* run(request)
      expect(rest).toEqual([])
      expect(call).toMatchObject({ _tag: "ToolCall", name: "now", input: {} })
      expect(call?._tag === "ToolCall" ? call.id : "").toMatch(/^call_./)
    }))

  it.live("sends the model, our messages with earlier tool calls and results, the tools and stream: true", () =>
    Effect.gen(function*() {
      upstream.reply = sse(plainReply)
      yield* run(request)
      const [sent] = upstream.received
      expect(sent?.method).toBe("POST")
      expect(sent?.url).toBe("/v1/chat/completions")
      expect(sent?.headers["content-type"]).toContain("application/json")
      expect(sent?.body).toEqual({
        model: "test-model",
        stream: true,
        messages: [
          { role: "system", content: "You are Clark." },
          { role: "user", content: "Weather in Lyon?" },
          {
            role: "assistant",
            content: "Let me look.",
            tool_calls: [{ id: "call_0", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Lyon\"}" } }]
          },
          { role: "tool", tool_call_id: "call_0", content: "{\"temp\":21}" },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Nice\"}" } }]
          },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
          { role: "assistant", content: "21 degrees in Lyon, sunny in Nice." },
          { role: "user", content: "And Paris?" }
        ],
        tools: [{
          type: "function",
          function: { name: "get_weather", description: "Current weather of a city", parameters: weatherSchema }
        }]
      })
      // Left out on purpose: servers that refuse unknown fields exist.
      expect(sent?.body).not.toHaveProperty("stream_options")
    }))

  it.live("without tools there is no tools field; a tool without properties gets an empty object schema", () =>
    Effect.gen(function*() {
      upstream.reply = sse(plainReply)
      yield* run(hello)
      expect(upstream.received[0]?.body).not.toHaveProperty("tools")
      expect(upstream.received[0]?.body.messages).toEqual([{ role: "user", content: "Hello" }])

      upstream.reply = sse(plainReply)
      yield* run({ messages: [{ role: "user", text: "Time?" }], tools: [{ name: "now", description: "Now", inputSchema: {} }] })
      expect(upstream.received[1]?.body.tools).toEqual([{
        type: "function",
        function: { name: "now", description: "Now", parameters: { type: "object", properties: {} } }
      }])
    }))

  it.live("sends no Authorization header without a key, and the key as a Bearer token with one", () =>
    Effect.gen(function*() {
      upstream.reply = sse(plainReply)
      yield* run(hello)
      expect(upstream.received[0]?.headers.authorization).toBeUndefined()
      yield* run(hello, { apiKey: Redacted.make(key) })
      expect(upstream.received[1]?.headers.authorization).toBe(`Bearer ${key}`)
    }))

  it.live("a base URL with trailing slashes reaches the same path", () =>
    Effect.gen(function*() {
      upstream.reply = sse(plainReply)
      const events = yield* run(hello, { baseUrl: `${upstream.baseUrl}//` })
      expect(events).toHaveLength(3)
      expect(upstream.received[0]?.url).toBe("/v1/chat/completions")
    }))

  it.live("the answer ends at its finish_reason: a server that keeps the response open does not hold the turn", () =>
    Effect.gen(function*() {
      let onClose = () => {}
      const closed = new Promise<void>((resolve) => {
        onClose = resolve
      })
      upstream.reply = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        for (const frame of plainReply) res.write(`data: ${typeof frame === "string" ? frame : JSON.stringify(frame)}\n\n`)
        res.on("close", () => onClose())
      }
      const events = yield* run(hello).pipe(Effect.timeout("5 seconds"))
      expect(events.map((event) => event._tag === "TextDelta" ? event.text : "").join("")).toBe("Hello world")
      yield* Effect.promise(() => closed).pipe(Effect.timeout("5 seconds"))
    }))

  it.live("a server that closes without [DONE], or without a finish_reason, still ends normally with its tool calls", () =>
    Effect.gen(function*() {
      // The last piece of text may come with the finish_reason.
      upstream.reply = sse([first, chunk({ content: "Hi" }), chunk({ content: "!" }, "stop")])
      expect(yield* run(hello)).toEqual([{ _tag: "TextDelta", text: "Hi" }, { _tag: "TextDelta", text: "!" }])

      upstream.reply = sse([
        chunk({ content: "Hi" }),
        chunk({ tool_calls: [{ index: 0, id: "call_x", function: { name: "now", arguments: "{}" } }] })
      ])
      expect(yield* run(request)).toEqual([
        { _tag: "TextDelta", text: "Hi" },
        { _tag: "ToolCall", id: "call_x", name: "now", input: {} }
      ])
    }))

  it.live("ignores frames it does not know: usage, keep-alive comments, chunks without choices", () =>
    Effect.gen(function*() {
      upstream.reply = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(": keep-alive\n\n")
        res.write(`data: ${JSON.stringify({ ...chunk({}), choices: [] })}\n\n`)
        res.write(`data: ${JSON.stringify(chunk({ content: "ok" }))}\n\n`)
        res.write(`data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", usage: { total_tokens: 3 } })}\n\n`)
        res.write(`data: ${JSON.stringify(chunk({}, "stop"))}\n\ndata: [DONE]\n\n`)
        res.end()
      }
      expect(yield* run(hello)).toEqual([{ _tag: "TextDelta", text: "ok" }])
    }))

  it.live("delivers a delta while the response is still open, and stopping closes the request", () =>
    Effect.gen(function*() {
      let onClose = () => {}
      const closed = new Promise<void>((resolve) => {
        onClose = resolve
      })
      upstream.reply = (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify(chunk({ content: "first" }))}\n\n`)
        // The response stays open: only the consumer can end this turn.
        res.on("close", () => onClose())
      }
      const head = yield* ModelProvider.pipe(
        Effect.flatMap((provider) => firstEvent(provider, hello)),
        Effect.provide(layer())
      )
      expect(head).toEqual(Option.some({ _tag: "TextDelta", text: "first" }))
      yield* Effect.promise(() => closed).pipe(Effect.timeout("5 seconds"))
    }))

  it.live("a 401 becomes a provider-error naming the server and the status, without the key or the body", () =>
    Effect.gen(function*() {
      upstream.reply = json(401, { error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error" } })
      const error = yield* failure(run(request, { apiKey: Redacted.make(key) }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toBe(`The ${serverLabel()} answered HTTP 401 (unauthorized: check the API key)`)
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("Incorrect API key")
    }))

  it.live("a 500 becomes a provider-error without the body", () =>
    Effect.gen(function*() {
      upstream.reply = (res) => res.writeHead(500, { "content-type": "text/plain" }).end(`stack trace with ${key} inside`)
      const error = yield* failure(run(request, { apiKey: Redacted.make(key) }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain(serverLabel())
      expect(error.message).toContain("500")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("stack trace")
    }))

  it.live("a 404 (a server without Chat Completions, or a wrong base URL) says what to check", () =>
    Effect.gen(function*() {
      upstream.reply = json(404, { error: "not found" })
      const error = yield* failure(run(hello))
      expect(error.message).toContain("404")
      expect(error.message).toContain("base URL")
    }))

  it.live("an error object in the stream fails after the deltas before it, with the code only", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        first,
        chunk({ content: "Par" }),
        { error: { code: 500, message: `Internal failure for key ${key}`, type: "server_error" } },
        chunk({ content: "never" }),
        done
      ])
      const { error, seen } = yield* runUntilFailure(request, { apiKey: Redacted.make(key) })
      expect(seen).toEqual([{ _tag: "TextDelta", text: "Par" }])
      expect(error.code).toBe("provider-error")
      expect(error.message).toContain(serverLabel())
      expect(error.message).toContain("server_error")
      expect(error.message).not.toContain(key)
      expect(error.message).not.toContain("Internal failure")
    }))

  it.live("older vLLM's error frame and a bare error string are failures too", () =>
    Effect.gen(function*() {
      upstream.reply = sse([{ object: "error", message: `bad ${key}`, type: "BadRequestError", code: 400 }])
      const vllm = yield* runUntilFailure(hello, { apiKey: Redacted.make(key) })
      expect(vllm.error.message).toContain("BadRequestError")
      expect(vllm.error.message).not.toContain(key)

      upstream.reply = sse([chunk({ content: "a" }), { error: `model crashed, key ${key}` }])
      const bare = yield* runUntilFailure(hello, { apiKey: Redacted.make(key) })
      expect(bare.seen).toEqual([{ _tag: "TextDelta", text: "a" }])
      expect(bare.error.message).toBe(`The ${serverLabel()} reported an error`)
    }))

  it.live("tool call arguments that are not JSON fail; cut short by the length limit, the message says so", () =>
    Effect.gen(function*() {
      upstream.reply = sse([
        chunk({ tool_calls: [{ index: 0, id: "call_a", function: { name: "get_weather", arguments: "{\"city\":\"Par" } }] }),
        chunk({}, "length"),
        done
      ])
      const cut = yield* failure(run(request))
      expect(cut.code).toBe("provider-error")
      expect(cut.message).toContain("length limit")

      upstream.reply = sse([
        chunk({ tool_calls: [{ index: 0, id: "call_a", function: { name: "get_weather", arguments: "not json" } }] }),
        chunk({}, "tool_calls"),
        done
      ])
      const bad = yield* failure(run(request))
      expect(bad.message).toContain("tool call that could not be understood")
    }))

  it.live("an unreachable server is a provider-error naming it", () =>
    Effect.gen(function*() {
      const closed = createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve)))
      const port = (closed.address() as AddressInfo).port
      yield* Effect.promise(() => new Promise<void>((resolve) => closed.close(() => resolve())))
      const error = yield* failure(run(request, { baseUrl: `http://127.0.0.1:${port}/v1` }))
      expect(error.code).toBe("provider-error")
      expect(error.message).toBe(`Could not reach the model server at http://127.0.0.1:${port}/v1 (connection failed)`)
    }))

  it.live("an empty conversation fails without a request", () =>
    Effect.gen(function*() {
      const error = yield* failure(run({ messages: [], tools: [] }))
      expect(error.code).toBe("provider-error")
      expect(upstream.received).toHaveLength(0)
    }))

  it.effect("info names the provider and the model", () =>
    Effect.gen(function*() {
      const provider = yield* ModelProvider
      expect(provider.info).toEqual({ provider: "openai", name: "test-model" })
    }).pipe(Effect.provide(OpenAiChat.layer({ baseUrl: "http://127.0.0.1:1/v1", model: "test-model" }))))
})
