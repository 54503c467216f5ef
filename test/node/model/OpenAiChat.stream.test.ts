/**
 * The Chat Completions provider against a local server that speaks that protocol, when the answer streams: text,
 * reasoning and tool-call deltas, the request it sends, and the frames and endings the servers really send.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { type ModelEvent, ModelProvider } from "../../../services/node/ModelProvider.js"
import { firstEvent } from "../../support/ModelEvents.js"
import {
  chunk,
  done,
  first,
  hello,
  key,
  plainReply,
  request,
  sse,
  toolReply,
  useOpenAiServer,
  weatherSchema
} from "./OpenAiChatFixture.js"

const { layer, run, upstream } = useOpenAiServer()

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
})
