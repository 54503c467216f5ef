/**
 * ModelProvider for servers that speak OpenAI's Chat Completions API (`POST {baseUrl}/chat/completions`
 * with `stream: true`, answered as server-sent events `data: {chunk}` ending with `data: [DONE]`): OpenAI,
 * Ollama, llama.cpp's server, vLLM, LM Studio and most other OpenAI-compatible servers. The key is
 * optional and sent as `Authorization: Bearer` when given.
 *
 * `@effect/ai-openai` 0.41 has no Chat Completions language model, so this provider builds the request
 * itself and lets the library's `OpenAiClient` send it (base URL, key, HTTP errors) and decode the
 * server-sent events (`streamRequest`). The chunks are read with a lenient schema of our own: only the
 * fields used here, each optional, so that what the various servers add or leave out does not matter.
 */
import type { Generated } from "@effect/ai-openai"
import { OpenAiClient } from "@effect/ai-openai"
import { HttpBody, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Array as Arr, Cause, Effect, Layer, Option, type Redacted, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import {
  type ModelEvent,
  type ModelFailure,
  type ModelMessage,
  ModelProvider, runStream,
  type ModelRequest,
  type ToolSpec
} from "../../../services/node/ModelProvider.js"
import { failures } from "./EffectAi.js"

export interface Options {
  /** Base URL including the API version, e.g. `http://127.0.0.1:8080/v1` or `https://api.openai.com/v1`. */
  readonly baseUrl: string
  readonly model: string
  readonly apiKey?: Redacted.Redacted | undefined
}

/** How messages name the server: with its base URL, less credentials, query and fragment. */
export const serverName = (baseUrl: string): string => {
  try {
    const url = new URL(baseUrl)
    return `the model server at ${url.origin}${url.pathname.replace(/\/+$/, "")}`
  } catch {
    return "the model server"
  }
}

// =============================================================================
// Request
// =============================================================================

type ChatMessage = typeof Generated.ChatCompletionRequestMessage.Encoded
type ChatRequest = OpenAiClient.StreamCompletionRequest & { readonly stream: true }

/** A tool result as the text of a tool message: strings as they are, anything else as JSON. */
const resultText = (output: unknown): string =>
  typeof output === "string" ? output : JSON.stringify(output) ?? "null"

/** Our conversation as Chat Completions messages. */
export const toMessages = (messages: ReadonlyArray<ModelMessage>): Array<ChatMessage> =>
  messages.flatMap((message): Array<ChatMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.text }]
      case "user":
        return [{ role: "user", content: message.text }]
      case "assistant":
        // An assistant turn that said nothing and called nothing carries no information and some
        // servers refuse empty content.
        if (message.text.length === 0 && message.toolCalls.length === 0) return []
        // `content` stays a string (empty next to tool calls): every server accepts a string, not all
        // accept null.
        return [{
          role: "assistant",
          content: message.text,
          ...(message.toolCalls.length === 0 ? {} : {
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) }
            }))
          })
        }]
      case "tool":
        return [{ role: "tool", tool_call_id: message.toolCallId, content: resultText(message.output) }]
    }
  })

/** A ToolSpec's JSON Schema as function parameters: an object schema, with `properties` even when empty. */
const parameters = (inputSchema: Record<string, unknown>): Record<string, unknown> => {
  const withType = inputSchema["type"] === undefined ? { type: "object", ...inputSchema } : inputSchema
  return withType["type"] === "object" && withType["properties"] === undefined
    ? { ...withType, properties: {} }
    : withType
}

const toTools = (tools: ReadonlyArray<ToolSpec>) =>
  tools.map((spec) => ({
    type: "function" as const,
    function: { name: spec.name, description: spec.description, parameters: parameters(spec.inputSchema) }
  }))

/**
 * The request body. Only what every server understands: no `stream_options` (servers that refuse unknown
 * fields exist, and usage is not needed), no `tool_choice` (`auto` is the default when tools are given),
 * no `tools` when there are none.
 */
export const toBody = (model: string, request: ModelRequest): Option.Option<ChatRequest> => {
  const messages = toMessages(request.messages)
  if (!Arr.isNonEmptyArray(messages)) return Option.none()
  return Option.some({
    model,
    messages,
    ...(request.tools.length === 0 ? {} : { tools: toTools(request.tools) }),
    stream: true
  })
}

// =============================================================================
// Stream
// =============================================================================

const nullable = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

const ToolCallFragment = Schema.Struct({
  index: nullable(Schema.Number),
  id: nullable(Schema.String),
  function: nullable(Schema.Struct({ name: nullable(Schema.String), arguments: nullable(Schema.String) }))
})
type ToolCallFragment = typeof ToolCallFragment.Type

/** One `data:` frame of the stream: an error object, or a chunk (every field optional, unknown ones ignored). */
const Frame = Schema.Union(
  // OpenAI, Ollama, llama.cpp and vLLM: `{"error": {"message", "type", "code"}}` (some send a bare string).
  Schema.Struct({ error: Schema.Union(Schema.String, Schema.Record({ key: Schema.String, value: Schema.Unknown })) }),
  // Older vLLM: `{"object": "error", "message", "type", "code"}`.
  Schema.Struct({
    object: Schema.Literal("error"),
    type: Schema.optional(Schema.Unknown),
    code: Schema.optional(Schema.Unknown)
  }),
  Schema.Struct({
    choices: nullable(Schema.Array(Schema.Struct({
      index: nullable(Schema.Number),
      delta: nullable(Schema.Struct({
        content: nullable(Schema.String),
        // Reasoning of open-weight models: `reasoning_content` (llama.cpp, vLLM, DeepSeek) or `reasoning`
        // (Ollama, newer vLLM); OpenAI's own models do not stream theirs here.
        reasoning_content: nullable(Schema.String),
        reasoning: nullable(Schema.String),
        tool_calls: nullable(Schema.Array(ToolCallFragment))
      })),
      finish_reason: nullable(Schema.String)
    })))
  })
)
type Frame = typeof Frame.Type

interface PendingCall {
  id: string | undefined
  name: string | undefined
  arguments: string
}

/** The first choice of a chunk (we never ask for more than one). */
const firstChoice = (frame: Frame) =>
  "choices" in frame ? frame.choices?.find((choice) => (choice.index ?? 0) === 0) : undefined

/** An error frame (decoded chunks keep only the fields of their schema, so they have neither key). */
const isError = (frame: Frame): boolean => "error" in frame || "object" in frame

const isLast = (frame: Frame): boolean => isError(frame) || firstChoice(frame)?.finish_reason !== undefined

export const layer = (options: Options): Layer.Layer<ModelProvider> => {
  const server = serverName(options.baseUrl)
  const fail = failures(server, options.apiKey === undefined ? [] : [options.apiKey])

  const stream = (client: OpenAiClient.Service, request: ModelRequest): Stream.Stream<ModelEvent, ModelFailure> =>
    Stream.suspend(() => {
      // Tool calls arrive in fragments (id and name first, then pieces of the arguments), keyed by index;
      // they are reported whole once the answer is finished.
      const calls = new Map<number, PendingCall>()
      let lastSlot = -1
      let finishReason: string | undefined

      const slotOf = (fragment: ToolCallFragment): number => {
        if (fragment.index !== undefined) return fragment.index
        // Servers that leave out the index: a new id starts a new call, anything else continues the last.
        const known = [...calls.values()].some((call) => call.id === fragment.id)
        return fragment.id !== undefined && !known ? Math.max(-1, ...calls.keys()) + 1 : Math.max(0, lastSlot)
      }

      const addFragment = (fragment: ToolCallFragment) => {
        const slot = slotOf(fragment)
        lastSlot = slot
        const call = calls.get(slot) ?? { id: undefined, name: undefined, arguments: "" }
        calls.set(slot, call)
        // As OpenAI's own SDK accumulates them: the latest id and name win, arguments are concatenated.
        if (fragment.id !== undefined && fragment.id.length > 0) call.id = fragment.id
        const name = fragment.function?.name
        if (name !== undefined && name.length > 0) call.name = name
        if (fragment.function?.arguments !== undefined) call.arguments += fragment.function.arguments
      }

      const toEvents = (frame: Frame): Effect.Effect<ReadonlyArray<ModelEvent>, ModelFailure> => {
        if ("error" in frame) return Effect.fail(fail.fromErrorPart(frame.error))
        if ("object" in frame) return Effect.fail(fail.fromErrorPart(frame))
        const choice = firstChoice(frame)
        if (choice === undefined) return Effect.succeed([])
        const events: Array<ModelEvent> = []
        const reasoning = choice.delta?.reasoning_content ?? choice.delta?.reasoning
        if (reasoning !== undefined && reasoning.length > 0) events.push({ _tag: "ReasoningDelta", text: reasoning })
        const content = choice.delta?.content
        if (content !== undefined && content.length > 0) events.push({ _tag: "TextDelta", text: content })
        for (const fragment of choice.delta?.tool_calls ?? []) addFragment(fragment)
        if (choice.finish_reason !== undefined) finishReason = choice.finish_reason
        return Effect.succeed(events)
      }

      const toolCalls = (): Effect.Effect<ReadonlyArray<ModelEvent>, ModelFailure> =>
        Effect.forEach(
          [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
          (call): Effect.Effect<ModelEvent, ModelFailure> => {
            const cutShort = finishReason === "length"
              ? fail.make(`${server} stopped at its output length limit in the middle of a tool call`)
              : fail.make(`${server} sent a tool call that could not be understood`)
            const name = call.name
            if (name === undefined) return Effect.fail(cutShort)
            const text = call.arguments.trim()
            return Effect.try({
              try: (): unknown => (text.length === 0 ? {} : JSON.parse(text)),
              catch: () => cutShort
            }).pipe(
              // A call without an id still needs one that is unique in the turn: tool results refer to it.
              Effect.map((input) => ({ _tag: "ToolCall", id: call.id ?? `call_${randomUUID()}`, name, input }))
            )
          }
        )

      return Option.match(toBody(options.model, request), {
        onNone: () => Stream.fail(fail.make(`The conversation is empty: there is nothing to send to ${server}`)),
        onSome: (body) =>
          client.streamRequest(
            HttpClientRequest.post("/chat/completions", { body: HttpBody.unsafeJson(body) }),
            Frame
          ).pipe(
            Stream.mapError(fail.fromError),
            // `data: [DONE]` is not JSON: the client skips it. The answer is over at the first
            // finish_reason or error; stopping there does not wait for the server to close.
            Stream.takeUntil(isLast),
            Stream.mapConcatEffect(toEvents),
            Stream.concat(Stream.fromIterableEffect(Effect.suspend(toolCalls)))
          )
      })
    }).pipe(
      // A defect inside the client library is a failure too; interruption stays interruption.
      Stream.catchAllCause((cause) =>
        Option.match(Cause.failureOption(cause), {
          onSome: (failure) => Stream.fail(failure),
          onNone: () =>
            Cause.isInterruptedOnly(cause) ? Stream.failCause(cause) : Stream.fail(fail.fromError(Cause.squash(cause)))
        })
      )
    )

  return Layer.effect(
    ModelProvider,
    Effect.map(OpenAiClient.OpenAiClient, (client) =>
      ModelProvider.of({
        info: { provider: "openai", name: options.model },
        run: runStream((request) => stream(client, request))
      }))
  ).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.baseUrl.replace(/\/+$/, "") })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}
