/**
 * MediaFetcher: one source, checked against `CC_MEDIA_ORIGINS`, fetched over
 * https within 30 s, its bytes checked, then stored as a `media` artifact of
 * the conversation. Or an audio artifact the node already holds for that
 * conversation, checked the same way and reused as it is.
 */
import { Duration, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import {
  ArtifactStore,
  artifactRef,
  type ArtifactStore as ArtifactStoreService
} from "../../../services/node/ArtifactStore.js"
import {
  type FetchAudio,
  type MediaArtifact,
  MediaFetcher,
  mediaRefused,
  type MediaRefused,
  MediaSource
} from "../../../services/node/MediaFetcher.js"
import { inspectAudio } from "./Content.js"
import { fetchAudio as fetchOverHttps, type TransportOptions } from "./Https.js"
import {
  allowedOrigins,
  artifactName,
  checkSourceUrl,
  fetchTimeout,
  isAudioType,
  maxMediaBytes,
  MediaOriginsConfig,
  mediaTypeOf
} from "./Policy.js"
import { MediaResolver } from "./Resolver.js"

export interface Options extends TransportOptions {
  /** Allowed origins, as `parseMediaOrigins` returns them. */
  readonly origins: ReadonlyArray<string>
  /** The whole fetch, redirects and body included; default 30 s (the spec's limit). */
  readonly timeout?: Duration.DurationInput | undefined
}

const decodeSource = Schema.decodeUnknownEither(MediaSource, { onExcessProperty: "error" })

/** Exactly one source, either a URL or an artifact id, nothing else in it. */
const oneSource = (sources: unknown): Either.Either<MediaSource, MediaRefused> => {
  if (!Array.isArray(sources) || sources.length !== 1) {
    return Either.left(mediaRefused("source", "The player needs exactly one source"))
  }
  return Either.mapLeft(
    decodeSource(sources[0]),
    (_: ParseResult.ParseError) => mediaRefused("source", "A source is either {url} or {artifactId}")
  )
}

const notIssued = () => mediaRefused("source", "The artifact is not one this node holds for this conversation")

/** An audio artifact already stored for this conversation, its bytes checked again. */
const reuse = (store: ArtifactStoreService["Type"], conversationId: string, artifactId: string) =>
  Effect.gen(function*() {
    const stored = yield* store.get(artifactId)
    if (Option.isNone(stored) || stored.value.conversationId !== conversationId || stored.value.state !== "finalized") {
      return yield* Effect.fail(notIssued())
    }
    const declared = mediaTypeOf(stored.value.mimeType)
    if (!isAudioType(declared)) {
      return yield* Effect.fail(
        mediaRefused("type-not-allowed", "The artifact is not audio/mpeg, audio/ogg, audio/wav or audio/webm")
      )
    }
    const bytes = yield* Effect.flatMap(store.read(artifactId), Option.match({
      onNone: () => Effect.fail(notIssued()),
      onSome: Effect.succeed
    }))
    const durationSeconds = yield* inspectAudio(declared, bytes)
    return { artifactRef: artifactRef(stored.value), durationSeconds } satisfies MediaArtifact
  })

export const make = (options: Options) =>
  Effect.gen(function*() {
    const store = yield* ArtifactStore
    const resolver = yield* MediaResolver
    const allowed = new Set(options.origins)
    const timeout = options.timeout ?? fetchTimeout

    const fetchAudio = ({ conversationId, sources }: FetchAudio) =>
      Effect.gen(function*() {
        const source = yield* oneSource(sources)
        if ("artifactId" in source) return yield* reuse(store, conversationId, source.artifactId)
        const url = yield* checkSourceUrl(source.url, allowed)
        const audio = yield* fetchOverHttps(url, resolver, options).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => mediaRefused("timeout", `The fetch took longer than ${Duration.format(timeout)}`)
          })
        )
        const durationSeconds = yield* inspectAudio(audio.declared, audio.bytes)
        const stored = yield* store.create({
          conversationId,
          kind: "media",
          mimeType: audio.declared,
          name: artifactName(audio.url, audio.declared),
          bytes: audio.bytes
        }).pipe(
          Effect.catchTags({
            ArtifactQuotaExceeded: () =>
              Effect.fail(mediaRefused("quota-exceeded", "The node's artifact storage has no room for the file")),
            ArtifactTooLarge: () => Effect.fail(mediaRefused("too-large", `The file is larger than ${maxMediaBytes} bytes`))
          })
        )
        return { artifactRef: artifactRef(stored), durationSeconds } satisfies MediaArtifact
      }).pipe(
        Effect.tapError((error) =>
          error._tag === "MediaRefused"
            ? Effect.logInfo("media refused", { rule: error.rule })
            : Effect.logInfo("media not stored: the conversation is gone")
        ),
        Effect.withLogSpan("media.fetch")
      )

    return MediaFetcher.of({ fetchAudio })
  })

export const layer = (options: Options): Layer.Layer<MediaFetcher, never, ArtifactStore | MediaResolver> =>
  Layer.effect(MediaFetcher, make(options))

/**
 * The node's fetcher: origins from `CC_MEDIA_ORIGINS`. A list that cannot be
 * used is ignored whole and reported once here, by position, never by value.
 */
export const layerConfig = (
  options: Omit<Options, "origins"> = {}
): Layer.Layer<MediaFetcher, never, ArtifactStore | MediaResolver> =>
  Layer.effect(
    MediaFetcher,
    Effect.gen(function*() {
      const setting = yield* Effect.orDie(MediaOriginsConfig)
      if (setting._tag === "Ignored") {
        yield* Effect.logWarning("CC_MEDIA_ORIGINS is ignored, no media origin is allowed", { reason: setting.reason })
      }
      return yield* make({ ...options, origins: allowedOrigins(setting) })
    })
  )
