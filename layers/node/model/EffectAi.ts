/**
 * What the `@effect/ai` providers (OpenAI-compatible, Anthropic) share: our messages as an `@effect/ai`
 * Prompt, our run-time tool list as a Toolkit whose handlers are never called, the provider's stream parts
 * as ModelEvents, and every provider error as a ModelFailure that carries no key and no response body.
 */
import { AiError, type LanguageModel, Prompt, type Response, Tool, type Toolkit } from "@effect/ai"
import { Cause, Effect, Option, Redacted, Schema, Stream } from "effect"
import {
  type ModelEvent,
  ModelFailure,
  type ModelMessage,
  type ModelRequest,
  type ToolSpec
} from "../../../services/node/ModelProvider.js"

// =============================================================================
// Tools
// =============================================================================

/**
 * Any JSON object. The schema shown to the model is the ToolSpec's own JSON Schema (the `jsonSchema`
 * annotation replaces the generated one); the model's arguments are passed through undecoded, the engine
 * validates them when it runs the tool.
 */
const AnyObject = Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const toolJsonSchema = (inputSchema: Record<string, unknown>): Record<string, unknown> => {
  const withType = inputSchema["type"] === undefined ? { type: "object", ...inputSchema } : inputSchema
  return withType["type"] === "object" && withType["properties"] === undefined
    ? { ...withType, properties: {} }
    : withType
}

/** One `@effect/ai` Tool for a ToolSpec known only at run time. */
export const toTool = (spec: ToolSpec) =>
  Tool.make(spec.name, { description: spec.description }).setParameters(
    AnyObject.annotations({ jsonSchema: toolJsonSchema(spec.inputSchema) })
  )

/**
 * The tools of a request as a toolkit "with handlers". It is only ever used with
 * `disableToolCallResolution: true`, so `@effect/ai` reports the model's tool calls and never calls
 * `handle`: the turn engine runs the tools.
 */
export const toToolkit = (
  tools: ReadonlyArray<ToolSpec>
): Toolkit.WithHandler<Record<string, Tool.Any>> => ({
  tools: Object.fromEntries(tools.map((spec) => [spec.name, toTool(spec)])),
  handle: (name) => Effect.dieMessage(`The tool ${String(name)} is run by the turn engine, not by the model provider`)
})

// =============================================================================
// Prompt
// =============================================================================

/** Our conversation as an `@effect/ai` Prompt (consecutive tool results become one tool message). */
export const toPrompt = (messages: ReadonlyArray<ModelMessage>): Prompt.Prompt => {
  const out: Array<Prompt.MessageEncoded> = []
  let pendingResults: Array<Prompt.ToolResultPartEncoded> = []
  const flushResults = () => {
    if (pendingResults.length > 0) {
      out.push({ role: "tool", content: pendingResults })
      pendingResults = []
    }
  }
  for (const message of messages) {
    if (message.role === "tool") {
      pendingResults.push({
        type: "tool-result",
        id: message.toolCallId,
        name: message.name,
        result: message.output,
        isFailure: false,
        providerExecuted: false
      })
      continue
    }
    flushResults()
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.text })
        break
      case "user":
        out.push({ role: "user", content: [{ type: "text", text: message.text }] })
        break
      case "assistant": {
        const content: Array<Prompt.AssistantMessagePartEncoded> = []
        if (message.text.length > 0) content.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          content.push({ type: "tool-call", id: call.id, name: call.name, params: call.input, providerExecuted: false })
        }
        // An assistant turn that said nothing and called nothing carries no information and some
        // providers refuse empty content.
        if (content.length > 0) out.push({ role: "assistant", content })
        break
      }
    }
  }
  flushResults()
  return Prompt.make(out)
}

// =============================================================================
// Errors
// =============================================================================

const statusReason = (status: number): string => {
  switch (status) {
    case 400:
      return "bad request"
    case 401:
      return "unauthorized: check the API key"
    case 403:
      return "forbidden: check the API key's permissions"
    case 404:
      return "not found: check the base URL and the model name"
    case 408:
      return "request timeout"
    case 413:
      return "request too large"
    case 422:
      return "request not accepted"
    case 429:
      return "rate limited or out of quota"
    case 529:
      return "overloaded"
    default:
      return status >= 500 ? "server error" : "request refused"
  }
}

/** A provider's error code or type, kept only when it looks like an identifier (never free text). */
const safeCode = (value: unknown): string | undefined =>
  typeof value === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(value) ? value : undefined

const errorPartCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return safeCode(error)
  const record = error as Record<string, unknown>
  return safeCode(record["code"]) ?? safeCode(record["type"])
}

const scrub = (message: string, secrets: ReadonlyArray<Redacted.Redacted>): string =>
  secrets.reduce((text, secret) => {
    const value = Redacted.value(secret)
    return value.length === 0 ? text : text.split(value).join("[redacted]")
  }, message)

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * Builds ModelFailures for one provider. `provider` names it in messages ("the model server at URL",
 * "Anthropic"); `secrets` are scrubbed from every message as a last guard (the messages are built here
 * from status codes and fixed texts only, never from response bodies).
 */
export const failures = (provider: string, secrets: ReadonlyArray<Redacted.Redacted>) => {
  const make = (message: string) =>
    new ModelFailure({ code: "provider-error", message: scrub(capitalize(message), secrets) })
  const fromError = (error: unknown): ModelFailure => {
    if (error instanceof ModelFailure) return error
    if (!AiError.isAiError(error)) return make(`${provider} failed unexpectedly`)
    switch (error._tag) {
      case "HttpResponseError":
        return error.reason === "StatusCode"
          ? make(`${provider} answered HTTP ${error.response.status} (${statusReason(error.response.status)})`)
          : make(`${provider} sent a response that could not be read (HTTP ${error.response.status})`)
      case "HttpRequestError":
        return make(
          error.reason === "Transport"
            ? `Could not reach ${provider} (connection failed)`
            : error.reason === "InvalidUrl"
            ? `Could not reach ${provider} (invalid URL)`
            : `Could not send the request to ${provider}`
        )
      case "MalformedOutput":
        return make(
          `${provider} sent output that could not be understood (a malformed event, or a call to a tool ` +
            "that was not offered)"
        )
      case "MalformedInput":
        return make(`The request could not be prepared for ${provider}`)
      case "UnknownError": {
        const code = safeCode(error.description)
        return make(`${provider} reported an error${code === undefined ? "" : ` (${code})`}`)
      }
    }
  }
  const fromErrorPart = (error: unknown): ModelFailure => {
    const code = errorPartCode(error)
    return make(`${provider} reported an error${code === undefined ? "" : ` (${code})`}`)
  }
  return { make, fromError, fromErrorPart }
}

// =============================================================================
// Streaming
// =============================================================================

/**
 * Streams one request through an `@effect/ai` LanguageModel: text and reasoning deltas in order, each
 * tool call once with its parsed input, never executed. Any failure (including a defect inside the
 * provider library) ends the stream with a ModelFailure; interruption stays interruption.
 */
export const streamRequest = (
  model: LanguageModel.Service,
  request: ModelRequest,
  fail: ReturnType<typeof failures>
): Stream.Stream<ModelEvent, ModelFailure> => {
  const parts = (prompt: Prompt.Prompt): Stream.Stream<Response.AnyPart, AiError.AiError> =>
    request.tools.length === 0
      ? model.streamText({ prompt })
      : model.streamText({ prompt, toolkit: toToolkit(request.tools), disableToolCallResolution: true })

  const toEvents = (part: Response.AnyPart): Effect.Effect<ReadonlyArray<ModelEvent>, ModelFailure> => {
    switch (part.type) {
      case "text-delta":
        return Effect.succeed(part.delta.length === 0 ? [] : [{ _tag: "TextDelta", text: part.delta }])
      case "reasoning-delta":
        return Effect.succeed(part.delta.length === 0 ? [] : [{ _tag: "ReasoningDelta", text: part.delta }])
      case "tool-call":
        return Effect.succeed(
          part.providerExecuted ? [] : [{ _tag: "ToolCall", id: part.id, name: part.name, input: part.params }]
        )
      case "error":
        return Effect.fail(fail.fromErrorPart(part.error))
      default:
        return Effect.succeed([])
    }
  }

  return Effect.try({
    try: () => toPrompt(request.messages),
    catch: () => fail.make("The conversation could not be turned into a prompt")
  }).pipe(
    Effect.map((prompt) =>
      parts(prompt).pipe(
        Stream.mapError(fail.fromError),
        Stream.mapConcatEffect(toEvents)
      )
    ),
    Stream.unwrap,
    Stream.catchAllCause((cause) =>
      Option.match(Cause.failureOption(cause), {
        onSome: (failure) => Stream.fail(failure),
        onNone: () =>
          Cause.isInterruptedOnly(cause) ? Stream.failCause(cause) : Stream.fail(fail.fromError(Cause.squash(cause)))
      })
    )
  )
}
