/**
 * The Chat Completions provider's failures against a local server: HTTP errors, error frames in the stream, bad
 * tool-call arguments, an unreachable server, an empty conversation; and the provider's info.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as OpenAiChat from "../../../layers/node/model/OpenAiChat.js"
import { ModelProvider } from "../../../services/node/ModelProvider.js"
import {
  chunk,
  done,
  first,
  hello,
  json,
  key,
  request,
  sse,
  useOpenAiServer
} from "./OpenAiChatFixture.js"

const { failure, run, runUntilFailure, serverLabel, upstream } = useOpenAiServer()

// =============================================================================
// Tests
// =============================================================================

describe("OpenAiChat", () => {
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
