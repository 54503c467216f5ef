/**
 * Which ModelProvider the node runs: `--model openai:MODEL`, `--model anthropic:MODEL`,
 * `--model scripted:FILE`, or none (NoModel). Base URL, wire API and keys come from the environment
 * (ModelConfig) or from flags the CLI reads.
 */
import { Config, ConfigError, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import type { ModelProvider } from "../../../services/node/ModelProvider.js"
import * as NoModel from "./NoModel.js"

export type ModelSpec =
  | { readonly _tag: "OpenAi"; readonly model: string }
  | { readonly _tag: "Anthropic"; readonly model: string }
  | { readonly _tag: "Scripted"; readonly file: string }

const forms = "openai:MODEL, anthropic:MODEL or scripted:FILE"

/**
 * Parses a `--model` value. Only the first colon separates the provider, so model names with colons
 * (`openai:llama3.2:3b`) and Windows paths (`scripted:C:\demo.json`) stay whole. Right is the spec, Left a
 * message for the person.
 */
export const parseModelSpec = (spec: string): Either.Either<ModelSpec, string> => {
  const trimmed = spec.trim()
  const colon = trimmed.indexOf(":")
  if (colon < 0) return Either.left(`Invalid --model "${trimmed}": expected ${forms}.`)
  const provider = trimmed.slice(0, colon).toLowerCase()
  const rest = trimmed.slice(colon + 1).trim()
  switch (provider) {
    case "openai":
      return rest.length === 0
        ? Either.left("Invalid --model: openai: needs a model name, e.g. openai:llama3.2.")
        : Either.right({ _tag: "OpenAi", model: rest })
    case "anthropic":
      return rest.length === 0
        ? Either.left("Invalid --model: anthropic: needs a model name, e.g. anthropic:claude-sonnet-4-5.")
        : Either.right({ _tag: "Anthropic", model: rest })
    case "scripted":
      return rest.length === 0
        ? Either.left("Invalid --model: scripted: needs a script file, e.g. scripted:demo.json.")
        : Either.right({ _tag: "Scripted", file: rest })
    default:
      return Either.left(`Invalid --model "${trimmed}": unknown provider "${provider}", expected ${forms}.`)
  }
}

/** The `--model` value could not be used; the message is meant for the person starting the node. */
export class ModelSpecError extends Schema.TaggedError<ModelSpecError>()("ModelSpecError", {
  message: Schema.String
}) {}

export const defaultBaseUrl = "http://127.0.0.1:11434/v1"

/**
 * The wire API of `openai:MODEL`: `chat` is Chat Completions (`POST /chat/completions`), which OpenAI,
 * Ollama, llama.cpp, vLLM and LM Studio all speak; `responses` is OpenAI's Responses API (`POST /responses`).
 */
export const modelApis = ["chat", "responses"] as const
export type ModelApi = typeof modelApis[number]
export const defaultModelApi: ModelApi = "chat"

const isModelApi = (value: string): value is ModelApi => (modelApis as ReadonlyArray<string>).includes(value)

/** Reads a wire API name, ignoring case and surrounding spaces. */
export const parseModelApi = (value: string): Either.Either<ModelApi, string> => {
  const normalized = value.trim().toLowerCase()
  return isModelApi(normalized)
    ? Either.right(normalized)
    : Either.left(`Invalid model API "${value.trim()}": expected ${modelApis.join(" or ")}.`)
}

const optionalRedacted = (name: string): Config.Config<Redacted.Redacted | undefined> =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).length > 0)),
    Config.map(Option.getOrUndefined)
  )

/** The model settings taken from the environment. An empty key counts as no key. */
export const ModelConfig: Config.Config<{
  readonly baseUrl: string
  readonly modelApi: ModelApi
  readonly openAiKey: Redacted.Redacted | undefined
  readonly anthropicKey: Redacted.Redacted | undefined
}> = Config.all({
  baseUrl: Config.string("CC_MODEL_BASE_URL").pipe(Config.withDefault(defaultBaseUrl)),
  modelApi: Config.string("CC_MODEL_API").pipe(
    Config.mapOrFail((value) =>
      Either.mapLeft(parseModelApi(value), (message) => ConfigError.InvalidData([], message))
    ),
    Config.withDefault(defaultModelApi)
  ),
  openAiKey: optionalRedacted("CC_MODEL_API_KEY"),
  anthropicKey: optionalRedacted("CC_ANTHROPIC_API_KEY")
})

export interface SelectOptions {
  /** Base URL of the OpenAI-compatible server; default `http://127.0.0.1:11434/v1` (Ollama). */
  readonly baseUrl?: string | undefined
  /** Wire API of `openai:MODEL`; default `chat`. */
  readonly modelApi?: ModelApi | undefined
  readonly openAiKey?: Redacted.Redacted | undefined
  readonly anthropicKey?: Redacted.Redacted | undefined
  readonly scripted: (file: string) => Layer.Layer<ModelProvider>
}

/** The ModelProvider for a `--model` value; NoModel when there is none. */
export const layerFromSpec = (
  spec: string | undefined,
  options: SelectOptions
): Layer.Layer<ModelProvider, ModelSpecError> => {
  if (spec === undefined) return NoModel.layer
  return Either.match(parseModelSpec(spec), {
    onLeft: (message) => Layer.fail(new ModelSpecError({ message })),
    onRight: (parsed): Layer.Layer<ModelProvider, ModelSpecError> => {
      switch (parsed._tag) {
        // The providers are loaded only when chosen: their modules weigh about 70 MiB of heap.
        case "OpenAi": {
          const openAi = {
            baseUrl: options.baseUrl ?? defaultBaseUrl,
            model: parsed.model,
            apiKey: options.openAiKey
          }
          return Layer.unwrapEffect(
            (options.modelApi ?? defaultModelApi) === "responses"
              ? Effect.promise(() => import("./OpenAiCompatible.js")).pipe(
                Effect.map((OpenAiCompatible) => OpenAiCompatible.layer(openAi))
              )
              : Effect.promise(() => import("./OpenAiChat.js")).pipe(
                Effect.map((OpenAiChat) => OpenAiChat.layer(openAi))
              )
          )
        }
        case "Anthropic":
          return options.anthropicKey === undefined
            ? Layer.fail(
              new ModelSpecError({
                message: `--model anthropic:${parsed.model} needs an API key in CC_ANTHROPIC_API_KEY.`
              })
            )
            : Layer.unwrapEffect(
              Effect.promise(() => import("./Anthropic.js")).pipe(
                Effect.map((Anthropic) => Anthropic.layer({ model: parsed.model, apiKey: options.anthropicKey! }))
              )
            )
        case "Scripted":
          return options.scripted(parsed.file)
      }
    }
  })
}
