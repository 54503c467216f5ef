/**
 * Audio for the audio player, fetched by the node once when the player is
 * placed, checked against the media content policy and stored as a
 * conversation artifact; the player then plays the node's copy (content
 * policy stays `media-src 'self' blob:`).
 */
import { Context, Data, type Effect, Schema } from "effect"
import type { ArtifactRef } from "../../schema/node/Artifact.js"
import type { ConversationNotFound } from "./ArtifactStore.js"

/**
 * The spec's media policy rules, plus `quota-exceeded` (a passing file that
 * does not fit in the node's artifact storage), which the spec leaves unnamed.
 */
export const mediaRules = [
  "origin-not-allowed",
  "https-only",
  "credentials-in-url",
  "private-address",
  "redirect-off-origin",
  "too-many-redirects",
  "type-not-allowed",
  "type-mismatch",
  "too-large",
  "too-long",
  "duration-unknown",
  "timeout",
  "not-found",
  "fetch-failed",
  "source",
  "quota-exceeded"
] as const
export type MediaRule = typeof mediaRules[number]

/**
 * A refusal. `message` is English (for logs and the person), ends with
 * `(media policy rule: <rule>)` and never holds a URL's path, query or
 * credentials nor a resolved address.
 */
export class MediaRefused extends Data.TaggedError("MediaRefused")<{
  readonly rule: MediaRule
  readonly message: string
}> {}

export const mediaRefused = (rule: MediaRule, text: string): MediaRefused =>
  new MediaRefused({ rule, message: `${text} (media policy rule: ${rule})` })

/**
 * One source of the audio player's props: a URL the node fetches, or an
 * audio artifact the node already holds for the same conversation.
 */
export const MediaSource = Schema.Union(
  Schema.Struct({ url: Schema.String }),
  Schema.Struct({ artifactId: Schema.String })
)
export type MediaSource = typeof MediaSource.Type

export interface FetchAudio {
  readonly conversationId: string
  /** Exactly one source; the props arrive as JSON, so the shape is checked again at run time. */
  readonly sources: ReadonlyArray<MediaSource>
}

export interface MediaArtifact {
  /** `kind: media`, the declared audio type, byte size and `sha256:<hex>` digest. */
  readonly artifactRef: ArtifactRef
  /** Length stated by the container, in seconds. */
  readonly durationSeconds: number
}

export class MediaFetcher extends Context.Tag("clark/node/MediaFetcher")<MediaFetcher, {
  /**
   * Fetches (or reuses) one audio file and stores it as an artifact of the
   * conversation. A refusal stores nothing. Fails with `ConversationNotFound`
   * when the conversation is gone by the time the file is stored.
   */
  readonly fetchAudio: (input: FetchAudio) => Effect.Effect<MediaArtifact, MediaRefused | ConversationNotFound>
}>() {}
