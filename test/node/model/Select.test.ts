import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Redacted, Stream } from "effect"
import * as NoModel from "../../../layers/node/model/NoModel.js"
import { layerFromSpec, ModelConfig, parseModelSpec } from "../../../layers/node/model/Select.js"
import { ModelFailure, ModelProvider } from "../../../services/node/ModelProvider.js"

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
  Layer.succeed(ModelProvider, ModelProvider.of({ info: { provider: "scripted", name: file }, stream: () => Stream.empty }))

const infoOf = (layer: Layer.Layer<ModelProvider, unknown>) =>
  Effect.map(ModelProvider, (provider) => provider.info).pipe(Effect.provide(layer))

describe("layerFromSpec", () => {
  it.effect("no spec is NoModel, which fails every stream with no-model", () =>
    Effect.gen(function*() {
      const provider = yield* ModelProvider.pipe(Effect.provide(layerFromSpec(undefined, { scripted: scriptedInfo })))
      expect(provider.info).toBeNull()
      const error = yield* Effect.flip(Stream.runDrain(provider.stream({ messages: [], tools: [] })))
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

  it.effect("defaults to Ollama's URL and no keys", () =>
    Effect.gen(function*() {
      expect(yield* load({})).toEqual({
        baseUrl: "http://127.0.0.1:11434/v1",
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
})
