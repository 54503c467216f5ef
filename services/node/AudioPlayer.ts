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

/** The sources a placement's props give: `sources` as written, or one `source`; the fetcher checks there is one. */
export const sourcesOf = (props: unknown): ReadonlyArray<MediaSource> => {
  if (typeof props !== "object" || props === null) return []
  const record = props as Record<string, unknown>
  // Unchecked here on purpose: the fetcher checks each source's shape and that there is exactly one.
  if (Array.isArray(record.sources)) return record.sources as unknown as ReadonlyArray<MediaSource>
  return record.source === undefined ? [] : [record.source as MediaSource]
}

export class AudioPlayer extends Context.Tag("clark/node/AudioPlayer")<AudioPlayer, {
  readonly place: (
    context: { readonly conversationId: string; readonly taskId: string | null },
    props: unknown
  ) => Effect.Effect<WidgetInstance, MediaRefused | ConversationNotFound>
}>() {}
