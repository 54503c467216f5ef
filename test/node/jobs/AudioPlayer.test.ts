/**
 * The audio player's placement on a real SQLite file: its one source is fetched once through the media fetcher
 * and the player placed with the node's copy; a refusal of the fetcher (the `source` rule among them) places
 * nothing. The fetcher is a recording stand-in here: the real one, with every media policy rule, is tested in
 * test/node/media/.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as AudioPlayerLive from "../../../layers/node/media/AudioPlayer.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import { AudioPlayer, audioPlayerWidget } from "../../../services/node/AudioPlayer.js"
import { type FetchAudio, MediaFetcher, mediaRefused } from "../../../services/node/MediaFetcher.js"
import { hostPackageId, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import * as NodeServer from "../../support/NodeServer.js"

const artifactRef = { v: 1 as const, artifactId: "art_1", kind: "media" as const, mimeType: "audio/mpeg", sizeBytes: 1234, name: "tide.mp3", digest: "sha256:ab" }

const setup = Effect.gen(function*() {
  const calls = yield* Ref.make<ReadonlyArray<FetchAudio>>([])
  const fetcher = Layer.succeed(MediaFetcher, MediaFetcher.of({
    fetchAudio: (input) =>
      Effect.zipRight(
        Ref.update(calls, (all) => [...all, input]),
        input.sources.length === 1
          ? Effect.succeed({ artifactRef, durationSeconds: 61 })
          : Effect.fail(mediaRefused("source", "The player needs exactly one source"))
      )
  }))
  const store = SqlWidgetInstances.layer.pipe(Layer.provide(NodeDatabase.layer(NodeServer.makeDataDir())))
  const context = yield* Layer.build(Layer.provideMerge(AudioPlayerLive.layer, Layer.merge(fetcher, store)))
  return { calls, context }
})

describe("audio player", () => {
  it.scoped("fetches its one source once and places a host player that plays the node's copy", () =>
    Effect.gen(function*() {
      const { calls, context } = yield* setup
      const placed = yield* Effect.provide(
        Effect.flatMap(AudioPlayer, (player) =>
          player.place({ conversationId: "c1", taskId: "task_1" }, { title: "Tide report", sources: [{ url: "https://media.example/t.mp3" }] })),
        context
      )
      expect(yield* Ref.get(calls)).toEqual([{ conversationId: "c1", sources: [{ url: "https://media.example/t.mp3" }] }])
      expect(placed).toMatchObject({
        conversationId: "c1",
        packageId: hostPackageId,
        widgetId: audioPlayerWidget,
        revision: 1,
        props: { title: "Tide report", artifactRef, durationSeconds: 61, src: "/artifacts/art_1/content" },
        bindings: [{ id: "view-state", kind: "view-state" }]
      })
      // The URL the assistant gave is not in what the page receives.
      expect(JSON.stringify(placed.props)).not.toContain("media.example")
    }))

  it.scoped.each([
    ["no source", {}],
    ["two sources", { sources: [{ url: "https://a.example/1.mp3" }, { url: "https://a.example/2.mp3" }] }],
    ["props that are not an object", "https://a.example/1.mp3"]
  ])("places nothing for %s (media policy rule: source)", (_, props) =>
    Effect.gen(function*() {
      const { context } = yield* setup
      const refused = yield* Effect.provide(
        Effect.flip(Effect.flatMap(AudioPlayer, (player) => player.place({ conversationId: "c1", taskId: null }, props))),
        context
      )
      expect(refused).toMatchObject({ _tag: "MediaRefused", rule: "source", message: expect.stringMatching(/\(media policy rule: source\)$/) })
      const listed = yield* Effect.provide(Effect.flatMap(WidgetInstances, (instances) => instances.list("c1")), context)
      expect(listed).toEqual([])
    }))
})
