/**
 * `place_widget` of the host audio player (canvas.audio@1) through the placement the turn engine calls, with the
 * real media fetcher against a real local HTTPS server (the media tests' testbed, its certificate trusted by this
 * fetcher only): the source fetched once and stored as a conversation artifact, the player placed with the node's
 * copy; `source` refusals (not exactly one source, an id the node did not issue) and other policy refusals place
 * nothing, store nothing and send nothing.
 */
import { describe, expect, it as nodeIt, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as AudioPlayerLive from "../../../layers/node/media/AudioPlayer.js"
import * as SqlPackageRecords from "../../../layers/node/sql/SqlPackageRecords.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import * as Placement from "../../../layers/node/widgets/Placement.js"
import { audioPlayerWidget } from "../../../services/node/AudioPlayer.js"
import { MediaFetcher } from "../../../services/node/MediaFetcher.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { WidgetPlacement } from "../../../services/node/WidgetPlacement.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, query } from "../../support/NodeFixtures.js"
import { durations, fetcher, files, MediaServers, MediaStore, serversLayer, storeLayer } from "../media/Testbed.js"
import { placedBlock } from "./Fixtures.js"

/** The placement as the node builds it, over a fetcher that allows the HTTPS server's origin as written. */
const placing = Effect.gen(function*() {
  const servers = yield* MediaServers
  const origin = `https://127.0.0.1:${servers.media.port}`
  const media = yield* fetcher({ origins: [origin], ca: servers.certificate.cert })
  const context = yield* Layer.build(
    Placement.layer.pipe(
      Layer.provideMerge(AudioPlayerLive.layer),
      Layer.provideMerge(Layer.mergeAll(Layer.succeed(MediaFetcher, media), SqlWidgetInstances.layer, SqlPackageRecords.layer))
    )
  )
  const store = yield* MediaStore
  const placement = context.unsafeMap.get(WidgetPlacement.key) as WidgetPlacement["Type"]
  const instances = context.unsafeMap.get(WidgetInstances.key) as WidgetInstances["Type"]
  const requests = () => servers.media.requests.length
  return {
    origin,
    store,
    requests,
    place: (props: unknown, conversationId = store.conversationId) =>
      placement.place({ conversationId, taskId: "task_audio" }, { widget: audioPlayerWidget, props }),
    placed: (conversationId = store.conversationId) => instances.list(conversationId)
  }
})

layer(Layer.mergeAll(serversLayer, storeLayer()), { timeout: "60 seconds" })("placing the audio player", (it) => {
  it.scoped("fetches its one source once, stores it as a media artifact and places a player of the node's copy", () =>
    Effect.gen(function*() {
      const audio = yield* placing
      const conversationId = yield* audio.store.newConversation
      const before = audio.requests()
      const outcome = yield* audio.place({ title: "Harbour bells", source: { url: `${audio.origin}/ok.wav` } }, conversationId)
      expect(outcome.status).toBe("done")
      const output = outcome.output as any
      expect(output).toMatchObject({
        placed: true,
        packageId: "clark:host",
        widgetId: audioPlayerWidget,
        revision: 1,
        bindings: [{ id: "view-state", kind: "view-state" }],
        props: {
          title: "Harbour bells",
          durationSeconds: durations.wav,
          artifactRef: { kind: "media", mimeType: "audio/wav", sizeBytes: files.wav.length }
        }
      })
      const artifactId = output.props.artifactRef.artifactId as string
      expect(output.props.src).toBe(`/artifacts/${artifactId}/content`)
      // Fetched once; the page gets the node's copy, never the source URL.
      expect(audio.requests() - before).toBe(1)
      expect(JSON.stringify(output)).not.toContain("127.0.0.1")
      const rows = yield* audio.store.rows(conversationId)
      expect(rows.map((row) => [row.id, row.kind, row.state])).toEqual([[artifactId, "media", "finalized"]])
      const placed = yield* audio.placed(conversationId)
      expect(placed.map((instance) => [instance.instanceId, instance.widgetId, instance.taskId])).toEqual([
        [output.instanceId, audioPlayerWidget, "task_audio"]
      ])
      expect(JSON.stringify(placed[0]!.props)).not.toContain(audio.origin)

      // The same file again by its artifact id: placed without a second fetch, no second artifact.
      const again = yield* audio.place({ sources: [{ artifactId }] }, conversationId)
      expect(again.status).toBe("done")
      expect((again.output as any).props.artifactRef.artifactId).toBe(artifactId)
      expect(audio.requests() - before).toBe(1)
      expect((yield* audio.store.rows(conversationId)).length).toBe(1)
      expect((yield* audio.placed(conversationId)).length).toBe(2)
    }))

  describe("refusals place nothing, store nothing and send nothing", () => {
    const cases: ReadonlyArray<readonly [string, (origin: string, foreign: string) => unknown, string]> = [
      ["no source", () => ({ title: "x" }), "source"],
      ["two sources", (origin) => ({ sources: [{ url: `${origin}/ok.wav` }, { url: `${origin}/ok.mp3` }] }), "source"],
      ["a source beside sources", (origin) => ({ sources: [{ url: `${origin}/ok.wav` }], source: { url: `${origin}/ok.wav` } }), "source"],
      ["sources that is not a list", (origin) => ({ sources: `${origin}/ok.wav` }), "source"],
      ["a source with a url and an artifact id", (origin) => ({ source: { url: `${origin}/ok.wav`, artifactId: "art_x" } }), "source"],
      ["an artifact id the node never issued", () => ({ source: { artifactId: "art_0000000000000000" } }), "source"],
      ["an artifact of another conversation", (_, foreign) => ({ source: { artifactId: foreign } }), "source"],
      ["an origin not in the list", () => ({ source: { url: "https://media.example.org/ok.wav" } }), "origin-not-allowed"],
      ["plain http", (origin) => ({ source: { url: `${origin.replace("https:", "http:")}/ok.wav` } }), "https-only"]
    ]
    for (const [name, props, rule] of cases) {
      it.scoped(`${name}: rule ${rule}`, () =>
        Effect.gen(function*() {
          const audio = yield* placing
          // An audio artifact the node holds, but for another conversation.
          const other = yield* audio.store.newConversation
          const foreign = yield* audio.place({ source: { url: `${audio.origin}/ok.mp3` } }, other)
          const foreignId = (foreign.output as any).props.artifactRef.artifactId as string
          const conversationId = yield* audio.store.newConversation
          const before = audio.requests()
          const outcome = yield* audio.place(props(audio.origin, foreignId), conversationId)
          expect(outcome).toEqual({
            status: "failed",
            output: { error: "MEDIA_REFUSED", rule, message: expect.stringMatching(new RegExp(`\\(media policy rule: ${rule}\\)$`)) }
          })
          expect(audio.requests()).toBe(before)
          expect(yield* audio.placed(conversationId)).toEqual([])
          expect(yield* audio.store.rows(conversationId)).toEqual([])
        }))
    }
  })

  it.scoped("a file the policy refuses after fetching (not audio) places nothing and stores nothing", () =>
    Effect.gen(function*() {
      const audio = yield* placing
      const conversationId = yield* audio.store.newConversation
      const outcome = yield* audio.place({ source: { url: `${audio.origin}/page.html` } }, conversationId)
      expect(outcome).toMatchObject({ status: "failed", output: { error: "MEDIA_REFUSED", rule: "type-not-allowed" } })
      expect(yield* audio.placed(conversationId)).toEqual([])
      expect(yield* audio.store.rows(conversationId)).toEqual([])
    }))
})

describe("the node's turn tool", () => {
  const script = {
    rules: [
      {
        match: "^two sources",
        steps: [{
          tool: {
            name: "place_widget",
            input: { widget: audioPlayerWidget, props: { sources: [{ url: "https://a.example/1.mp3" }, { url: "https://a.example/2.mp3" }] } }
          }
        }],
        after: [{ delta: "Could not." }]
      },
      {
        match: "^no origins",
        steps: [{ tool: { name: "place_widget", input: { widget: audioPlayerWidget, props: { source: { url: "https://a.example/1.mp3" } } } } }],
        after: [{ delta: "Could not." }]
      }
    ]
  }
  nodeIt.scoped("place_widget of canvas.audio@1 reaches the media policy on the real node: refused, nothing placed or stored", () =>
    Effect.provide(
      Effect.gen(function*() {
        const node = yield* TestNode
        const id = yield* conversation
        for (const [text, rule] of [["two sources", "source"], ["no origins", "origin-not-allowed"]] as const) {
          const turn = yield* node.request("POST", `/conversations/${id}/messages`, { body: { text } })
          const block = placedBlock(turn.body)
          expect(block).toMatchObject({ status: "failed", output: { error: "MEDIA_REFUSED", rule } })
        }
        expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM widget_instances")).toEqual([{ n: 0 }])
        expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM artifacts")).toEqual([{ n: 0 }])
      }),
      NodeServer.layer({ script })
    ))
})
