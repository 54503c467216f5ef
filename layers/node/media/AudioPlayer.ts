/** The audio player's placement over the media fetcher and the widget instance store. */
import { Effect, Layer } from "effect"
import { AudioPlayer, audioPlayerWidget, sourcesOf } from "../../../services/node/AudioPlayer.js"
import { MediaFetcher } from "../../../services/node/MediaFetcher.js"
import { hostPackageId, playerBinding, WidgetInstances } from "../../../services/node/WidgetInstances.js"

export const make = Effect.gen(function*() {
  const media = yield* MediaFetcher
  const instances = yield* WidgetInstances
  return AudioPlayer.of({
    place: ({ conversationId, taskId }, props) =>
      Effect.gen(function*() {
        const fetched = yield* media.fetchAudio({ conversationId, sources: sourcesOf(props) })
        const title = typeof props === "object" && props !== null && typeof (props as { title?: unknown }).title === "string"
          ? (props as { title: string }).title.slice(0, 200)
          : undefined
        // The props hold the node's copy only: the source URL the assistant gave is not kept for the page.
        return yield* instances.place({
          conversationId,
          packageId: hostPackageId,
          version: "1",
          contentDigest: `host:${audioPlayerWidget}`,
          widgetId: audioPlayerWidget,
          props: {
            ...(title === undefined ? {} : { title }),
            artifactRef: fetched.artifactRef,
            durationSeconds: fetched.durationSeconds,
            src: `/artifacts/${fetched.artifactRef.artifactId}/content`
          },
          bindings: [playerBinding],
          offeredActions: [],
          taskId
        })
      })
  })
})

export const layer = Layer.effect(AudioPlayer, make)
