/**
 * ModelProvider for Anthropic's Messages API on `@effect/ai-anthropic` (`POST {baseUrl}/v1/messages`,
 * streamed as server-sent events; the key is sent as `x-api-key`).
 */
import { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, type Redacted } from "effect"
import { ModelProvider, runStream } from "../../../services/node/ModelProvider.js"
import { failures, streamRequest } from "./EffectAi.js"

export interface Options {
  readonly model: string
  readonly apiKey: Redacted.Redacted
  /** Default `https://api.anthropic.com`; a trailing `/v1` is accepted and dropped. */
  readonly baseUrl?: string | undefined
  /** Upper bound of the answer's length in tokens (Anthropic requires one); default 4096. */
  readonly maxTokens?: number | undefined
}

const apiUrl = (baseUrl: string): string => baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")

export const layer = (options: Options): Layer.Layer<ModelProvider> => {
  const fail = failures("Anthropic", [options.apiKey])
  return Layer.effect(
    ModelProvider,
    Effect.map(LanguageModel.LanguageModel, (model) =>
      ModelProvider.of({
        info: { provider: "anthropic", name: options.model },
        run: runStream((request) => streamRequest(model, request, fail))
      }))
  ).pipe(
    Layer.provide(
      AnthropicLanguageModel.layer({ model: options.model, config: { max_tokens: options.maxTokens ?? 4096 } })
    ),
    Layer.provide(AnthropicClient.layer({
      apiKey: options.apiKey,
      apiUrl: options.baseUrl === undefined ? undefined : apiUrl(options.baseUrl)
    })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}
