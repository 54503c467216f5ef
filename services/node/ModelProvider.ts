/**
 * A language model as the turn engine sees it: a prompt in, a stream of text,
 * reasoning and tool calls out. Tools are run by the engine, not the provider.
 */
import { Context, Schema, type Stream } from "effect"

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

export class ModelProvider extends Context.Tag("clark/node/ModelProvider")<ModelProvider, {
  readonly info: ModelInfo | null
  readonly stream: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelFailure>
}>() {}
