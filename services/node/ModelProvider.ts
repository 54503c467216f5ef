/**
 * A language model as the turn engine sees it: a prompt in, a stream of text,
 * reasoning and tool calls out. Tools are run by the engine, not the provider.
 */
import { Chunk, Context, Effect, Schema, Stream } from "effect"

export type ModelMessage =
  | { readonly role: "system"; readonly text: string }
  | { readonly role: "user"; readonly text: string }
  | {
    readonly role: "assistant"
    readonly text: string
    readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: unknown }>
  }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly output: unknown }

export interface ToolSpec {
  readonly name: string
  readonly description: string
  /** JSON Schema of the input. */
  readonly inputSchema: Record<string, unknown>
}

export interface ModelRequest {
  readonly messages: ReadonlyArray<ModelMessage>
  readonly tools: ReadonlyArray<ToolSpec>
}

export type ModelEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ReasoningDelta"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly id: string; readonly name: string; readonly input: unknown }

export class ModelFailure extends Schema.TaggedError<ModelFailure>()("ModelFailure", {
  /** Safe to show and to store: never carries a key or a raw provider body. */
  message: Schema.String,
  code: Schema.Literal("no-model", "provider-error", "script-error")
}) {}

export interface ModelInfo {
  readonly provider: string
  readonly name: string
}

/** Receives the model's events as they arrive; it runs synchronously and must not block. */
export type ModelEventSink = (event: ModelEvent) => void

export class ModelProvider extends Context.Tag("clark/node/ModelProvider")<ModelProvider, {
  readonly info: ModelInfo | null
  /**
   * One call of the model: each event goes to `onEvent` as it arrives, and the effect ends with the answer.
   * A callback rather than a Stream because the turn engine handles every delta synchronously, and a Stream
   * element that crosses an asynchronous boundary costs tens of microseconds of runtime work (see
   * docs/decisions.md, "The node's hot path").
   */
  readonly run: (request: ModelRequest, onEvent: ModelEventSink) => Effect.Effect<void, ModelFailure>
}>() {}

/** `run` for providers that parse their answer as a Stream: each chunk is handed over in one step. */
export const runStream = <R>(stream: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelFailure, R>) =>
(request: ModelRequest, onEvent: ModelEventSink): Effect.Effect<void, ModelFailure, R> =>
  Stream.runForEachChunk(stream(request), (chunk) => Effect.sync(() => Chunk.forEach(chunk, onEvent)))

/** Every event of one call, in order (tests, and callers that want the whole answer). */
export const collect = (provider: ModelProvider["Type"], request: ModelRequest) =>
  Effect.suspend(() => {
    const events: Array<ModelEvent> = []
    return Effect.as(provider.run(request, (event) => events.push(event)), events)
  })
