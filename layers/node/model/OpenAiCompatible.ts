/**
 * ModelProvider for OpenAI and OpenAI-compatible servers that offer the Responses API (Ollama, vLLM,
 * LM Studio), on `@effect/ai-openai`, which speaks that API (`POST {baseUrl}/responses`, streamed as
 * server-sent events). The key is optional and sent as `Authorization: Bearer` when given. Chosen with
 * `--model-api responses`; the default, Chat Completions, is OpenAiChat.
 */
import { AiError, LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, type Redacted, Stream } from "effect"
import { ModelProvider, runStream } from "../../../services/node/ModelProvider.js"
import { failures, streamRequest } from "./EffectAi.js"
import { serverName } from "./OpenAiChat.js"

export interface Options {
  /** Base URL including the API version, e.g. `http://127.0.0.1:11434/v1` or `https://api.openai.com/v1`. */
  readonly baseUrl: string
  readonly model: string
  readonly apiKey?: Redacted.Redacted | undefined
}

/**
 * Adjusts the client's event stream to what open-weight servers send and to what we need:
 * - `response.reasoning_text.delta` (raw reasoning, sent by gpt-oss on Ollama, llama.cpp and vLLM) is not
 *   handled by OpenAiLanguageModel, which only knows OpenAI's reasoning summaries: it is passed on as a
 *   summary delta so that it becomes a ReasoningDelta;
 * - `response.failed` would otherwise end the stream as a normal finish: it becomes an error.
 */
const adaptClient = Layer.effect(
  OpenAiClient.OpenAiClient,
  Effect.map(OpenAiClient.OpenAiClient, (client) =>
    OpenAiClient.OpenAiClient.of({
      ...client,
      createResponseStream: (options) =>
        client.createResponseStream(options).pipe(
          Stream.mapEffect((event): Effect.Effect<OpenAiClient.ResponseStreamEvent, AiError.AiError> => {
            switch (event.type) {
              case "response.reasoning_text.delta":
                return Effect.succeed(
                  new OpenAiClient.ResponseReasoningSummaryTextDeltaEvent({
                    type: "response.reasoning_summary_text.delta",
                    sequence_number: event.sequence_number,
                    summary_index: 0,
                    output_index: event.output_index,
                    item_id: event.item_id,
                    delta: event.delta
                  })
                )
              case "response.failed":
                return Effect.fail(
                  new AiError.UnknownError({
                    module: "OpenAiCompatible",
                    method: "createResponseStream",
                    description: event.response.error?.code ?? "response.failed"
                  })
                )
              default:
                return Effect.succeed(event)
            }
          })
        )
    }))
)

export const layer = (options: Options): Layer.Layer<ModelProvider> => {
  const fail = failures(serverName(options.baseUrl), options.apiKey === undefined ? [] : [options.apiKey])
  return Layer.effect(
    ModelProvider,
    Effect.map(LanguageModel.LanguageModel, (model) =>
      ModelProvider.of({
        info: { provider: "openai", name: options.model },
        run: runStream((request) => streamRequest(model, request, fail))
      }))
  ).pipe(
    // Tool schemas come from packages and are not written for OpenAI's strict mode.
    Layer.provide(OpenAiLanguageModel.layer({ model: options.model, config: { strict: false } })),
    Layer.provide(adaptClient),
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.baseUrl.replace(/\/+$/, "") })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}
