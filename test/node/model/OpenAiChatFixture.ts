/**
 * Shared by the OpenAiChat.*.test.ts files: Chat Completions frames and
 * replies as the servers send them, the requests the tests make, and the
 * provider run against a recording server of the calling test file.
 */
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { type ServerResponse } from "node:http"
import * as OpenAiChat from "../../../layers/node/model/OpenAiChat.js"
import {
  type ModelEvent,
  ModelFailure,
  collect,
  ModelProvider,
  type ModelRequest
} from "../../../services/node/ModelProvider.js"
import { useRecordingServer } from "../../support/RecordingServer.js"

// =============================================================================
// Frames
// =============================================================================

/** One `chat.completion.chunk` as the servers send it (llama.cpp's shape: every envelope field present). */
export const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "test-model",
  system_fingerprint: "b1",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }]
})

export const first = chunk({ role: "assistant", content: null })
export const done = "[DONE]"

/** Answers with these frames as SSE `data:` lines (objects as JSON, strings as they are), then closes. */
export const sse = (frames: ReadonlyArray<Record<string, unknown> | string>) => (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const frame of frames) res.write(`data: ${typeof frame === "string" ? frame : JSON.stringify(frame)}\n\n`)
  res.end()
}

export const json = (status: number, body: unknown) => (res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
}

export const plainReply = [
  first,
  chunk({ content: "Hel" }),
  chunk({ content: "lo" }),
  chunk({ content: " world" }),
  chunk({}, "stop"),
  done
]

/** Two tool calls at indexes 0 and 1, each split over several chunks, as OpenAI streams them. */
export const toolReply = [
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

export const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"],
  additionalProperties: false
}

export const request: ModelRequest = {
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

export const hello: ModelRequest = { messages: [{ role: "user", text: "Hello" }], tools: [] }

export const key = "sk-test-secret-1234"
/** A recording server for the calling test file (its hooks), and the provider run against it. */
export const useOpenAiServer = () => {
  const upstream = useRecordingServer("/v1")

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

  return { upstream, layer, run, runUntilFailure, failure, serverLabel }
}
