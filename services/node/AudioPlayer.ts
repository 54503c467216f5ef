/**
 * The audio player (spec, "Media content policy"; canvas.audio@1): placing it fetches its one source once through
 * the media fetcher (every media policy rule, the `source` rule included), stores the file as a conversation
 * artifact and places a host-held player whose props name the node's copy, which it plays from
 * `/artifacts/{artifactId}/content` (content policy stays `media-src 'self' blob:`). A refusal places nothing.
 */
import { Context, type Effect } from "effect"
import type { ConversationNotFound } from "./ArtifactStore.js"
import type { MediaRefused, MediaSource } from "./MediaFetcher.js"
import type { WidgetInstance } from "./WidgetInstances.js"

export const audioPlayerWidget = "canvas.audio@1"

/**
 * The sources a placement's props give: every entry of `sources` and `source` together (a `source` beside
 * `sources` is one more source, not a choice between them; a `sources` that is not a list is one malformed
 * source). The fetcher checks there is exactly one and its shape.
 */
export const sourcesOf = (props: unknown): ReadonlyArray<MediaSource> => {
  if (typeof props !== "object" || props === null) return []
  const record = props as Record<string, unknown>
  // Unchecked here on purpose: the fetcher checks each source's shape and that there is exactly one.
  const listed = record.sources === undefined ? [] : Array.isArray(record.sources) ? record.sources : [record.sources]
  return [...listed, ...(record.source === undefined ? [] : [record.source])] as ReadonlyArray<MediaSource>
}

export class AudioPlayer extends Context.Tag("clark/node/AudioPlayer")<AudioPlayer, {
  readonly place: (
    context: { readonly conversationId: string; readonly taskId: string | null },
    props: unknown
  ) => Effect.Effect<WidgetInstance, MediaRefused | ConversationNotFound>
}>() {}
