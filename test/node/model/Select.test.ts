import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Redacted } from "effect"
import * as NoModel from "../../../layers/node/model/NoModel.js"
import {
  layerFromSpec,
  type ModelApi,
  ModelConfig,
  parseModelApi,
  parseModelSpec
} from "../../../layers/node/model/Select.js"
import { ModelFailure, ModelProvider } from "../../../services/node/ModelProvider.js"
import { useRecordingServer } from "../../support/RecordingServer.js"

const upstream = useRecordingServer("/v1")

describe("parseModelSpec", () => {
  it("reads the three providers", () => {
    expect(parseModelSpec("openai:gpt-4.1-mini")).toEqual(Either.right({ _tag: "OpenAi", model: "gpt-4.1-mini" }))
    expect(parseModelSpec("anthropic:claude-sonnet-4-5")).toEqual(
      Either.right({ _tag: "Anthropic", model: "claude-sonnet-4-5" })
    )
    expect(parseModelSpec("scripted:demo/script.json")).toEqual(
      Either.right({ _tag: "Scripted", file: "demo/script.json" })
    )
  })

  it("splits at the first colon only and trims", () => {
    expect(parseModelSpec(" openai:llama3.2:3b ")).toEqual(Either.right({ _tag: "OpenAi", model: "llama3.2:3b" }))
    expect(parseModelSpec("scripted:C:\\demo.json")).toEqual(Either.right({ _tag: "Scripted", file: "C:\\demo.json" }))
    expect(parseModelSpec("OpenAI:gpt-4o")).toEqual(Either.right({ _tag: "OpenAi", model: "gpt-4o" }))
  })

  it("refuses a missing provider, an unknown provider and an empty name", () => {
    for (const spec of ["gpt-4o", "", "ollama:llama3", "openai:", "anthropic: ", "scripted:"]) {
      const parsed = parseModelSpec(spec)
      expect(Either.isLeft(parsed), spec).toBe(true)
    }
    expect(parseModelSpec("ollama:llama3")).toEqual(
      Either.left("Invalid --model \"ollama:llama3\": unknown provider \"ollama\", expected openai:MODEL, " +
        "anthropic:MODEL or scripted:FILE.")
    )
  })
})

const scriptedInfo = (file: string) =>
  Layer.succeed(ModelProvider, ModelProvider.of({ info: { provider: "scripted", name: file }, run: () => Effect.void }))

const infoOf = (layer: Layer.Layer<ModelProvider, unknown>) =>
  Effect.map(ModelProvider, (provider) => provider.info).pipe(Effect.provide(layer))

describe("parseModelApi", () => {
  it("reads chat and responses, ignoring case and spaces, and refuses anything else", () => {
    expect(parseModelApi("chat")).toEqual(Either.right("chat"))
    expect(parseModelApi(" Responses ")).toEqual(Either.right("responses"))
    expect(parseModelApi("completions")).toEqual(
      Either.left("Invalid model API \"completions\": expected chat or responses.")
    )
    expect(Either.isLeft(parseModelApi(""))).toBe(true)
  })
})

describe("layerFromSpec", () => {
  it.effect("no spec is NoModel, which fails every stream with no-model", () =>
    Effect.gen(function*() {
      const provider = yield* ModelProvider.pipe(Effect.provide(layerFromSpec(undefined, { scripted: scriptedInfo })))
      expect(provider.info).toBeNull()
      const error = yield* Effect.flip(provider.run({ messages: [], tools: [] }, () => undefined))
      expect(error).toBeInstanceOf(ModelFailure)
      expect(error.code).toBe("no-model")
      expect(error.message).toBe(NoModel.message)
      expect(error.message).toContain("--model openai:MODEL")
    }))

  it.effect("picks the provider of the spec", () =>
    Effect.gen(function*() {
      const options = { scripted: scriptedInfo, anthropicKey: Redacted.make("k") }
      expect(yield* infoOf(layerFromSpec("openai:llama3.2", options))).toEqual({ provider: "openai", name: "llama3.2" })
      expect(yield* infoOf(layerFromSpec("anthropic:claude-x", options))).toEqual({
        provider: "anthropic",
        name: "claude-x"
      })
      expect(yield* infoOf(layerFromSpec("scripted:demo.json", options))).toEqual({
        provider: "scripted",
        name: "demo.json"
      })
    }))

  it.live("openai: speaks Chat Completions by default and the Responses API with modelApi responses", () =>
    Effect.gen(function*() {
      // Every request is refused: only the path each wire API calls matters here.
      upstream.reply = (res) => res.writeHead(503).end()
      const pathOf = (modelApi: ModelApi | undefined) =>
        Effect.gen(function*() {
          const provider = yield* ModelProvider
          expect(provider.info).toEqual({ provider: "openai", name: "llama3.2" })
          const error = yield* Effect.flip(
            provider.run({ messages: [{ role: "user", text: "Hi" }], tools: [] }, () => undefined)
          )
          expect(error.message, String(modelApi)).toContain("503")
          return upstream.received.at(-1)?.url
        }).pipe(
          // The layer must outlive the stream: its HTTP client closes with it.
          Effect.provide(layerFromSpec("openai:llama3.2", {
            scripted: scriptedInfo,
            baseUrl: upstream.baseUrl,
            ...(modelApi === undefined ? {} : { modelApi })
          }))
        )
      expect(yield* pathOf(undefined)).toBe("/v1/chat/completions")
      expect(yield* pathOf("chat")).toBe("/v1/chat/completions")
      expect(yield* pathOf("responses")).toBe("/v1/responses")
    }))

  it.effect("an invalid spec or anthropic without a key fails to build with a message", () =>
    Effect.gen(function*() {
      const invalid = yield* Effect.flip(infoOf(layerFromSpec("nope", { scripted: scriptedInfo })))
      expect(invalid).toMatchObject({ _tag: "ModelSpecError" })
      const noKey = yield* Effect.flip(infoOf(layerFromSpec("anthropic:claude-x", { scripted: scriptedInfo })))
      expect(noKey).toMatchObject({ _tag: "ModelSpecError", message: expect.stringContaining("CC_ANTHROPIC_API_KEY") })
    }))
})

describe("ModelConfig", () => {
  const load = (env: Record<string, string>) =>
    Effect.withConfigProvider(ModelConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.effect("defaults to Ollama's URL, Chat Completions and no keys", () =>
    Effect.gen(function*() {
      expect(yield* load({})).toEqual({
        baseUrl: "http://127.0.0.1:11434/v1",
        modelApi: "chat",
        openAiKey: undefined,
        anthropicKey: undefined
      })
    }))

  it.effect("reads the URL and the keys as Redacted; an empty key is no key", () =>
    Effect.gen(function*() {
      const config = yield* load({
        CC_MODEL_BASE_URL: "http://127.0.0.1:8080/v1",
        CC_MODEL_API_KEY: "sk-1",
        CC_ANTHROPIC_API_KEY: ""
      })
      expect(config.baseUrl).toBe("http://127.0.0.1:8080/v1")
      expect(Redacted.isRedacted(config.openAiKey)).toBe(true)
      expect(config.openAiKey === undefined ? undefined : Redacted.value(config.openAiKey)).toBe("sk-1")
      expect(String(config.openAiKey)).not.toContain("sk-1")
      expect(config.anthropicKey).toBeUndefined()
    }))

  it.effect("reads the wire API from CC_MODEL_API and refuses an unknown one, naming the variable", () =>
    Effect.gen(function*() {
      expect((yield* load({ CC_MODEL_API: "responses" })).modelApi).toBe("responses")
      expect((yield* load({ CC_MODEL_API: " CHAT " })).modelApi).toBe("chat")
      const error = yield* Effect.flip(load({ CC_MODEL_API: "completions" }))
      expect(String(error)).toContain("CC_MODEL_API")
      expect(String(error)).toContain("expected chat or responses")
    }))
})
