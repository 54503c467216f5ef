/** Composer suggestions: the refs a message may carry, offered after `/` or `@`. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ConversationId, Ref, RefKind } from "./Conversation.js"
import { refusals } from "./Errors.js"
import { Authenticated } from "./Security.js"

/** `/` offers skills; `@` offers projects, files, folders, services, conversations and background work. */
export const SuggestionTrigger = Schema.Literal("/", "@")
export type SuggestionTrigger = typeof SuggestionTrigger.Type

export const maxSuggestions = 8

export const SuggestionParams = Schema.Struct({
  trigger: SuggestionTrigger,
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  conversationId: Schema.optional(ConversationId)
})

/** A row that can be chosen: its `ref` is sent back unchanged in the message's references. */
export const OfferedSuggestion = Schema.Struct({
  kind: RefKind,
  label: Schema.String,
  detail: Schema.optional(Schema.String),
  ref: Ref
})

/** A row shown but not choosable, with the reason. */
export const DisabledSuggestion = Schema.Struct({
  kind: RefKind,
  label: Schema.String,
  detail: Schema.optional(Schema.String),
  disabledReason: Schema.String
})

export const Suggestion = Schema.Union(OfferedSuggestion, DisabledSuggestion).annotations({ identifier: "Suggestion" })
export type Suggestion = typeof Suggestion.Type

export const SuggestionList = Schema.Struct({
  trigger: SuggestionTrigger,
  query: Schema.String,
  suggestions: Schema.Array(Suggestion).pipe(Schema.maxItems(maxSuggestions))
}).annotations({ identifier: "SuggestionList" })
export type SuggestionList = typeof SuggestionList.Type

export class ComposerGroup extends HttpApiGroup.make("composer")
  .add(
    HttpApiEndpoint.get("suggestions", "/composer/suggestions")
      .setUrlParams(SuggestionParams)
      .addSuccess(SuggestionList)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "NOT_IMPLEMENTED"))
      .middleware(Authenticated)
  )
{}
