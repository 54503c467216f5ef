/**
 * WidgetPlacement over the installed packages, the widget instance store and the audio player (whose placement
 * fetches its source through the media fetcher first).
 */
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { AudioPlayer, audioPlayerWidget } from "../../../services/node/AudioPlayer.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import {
  maxPropsChars,
  PlacementInput,
  type PlacementOutcome,
  WidgetPlacement
} from "../../../services/node/WidgetPlacement.js"
import {
  type BindingSpec,
  hostPackageId,
  playerBinding,
  type WidgetInstance,
  WidgetInstances
} from "../../../services/node/WidgetInstances.js"

const refused = (error: string, message: string): PlacementOutcome => ({ status: "failed", output: { error, message } })

/** The node's own players placed as they are; the audio player (canvas.audio@1) goes through AudioPlayer. */
const placeablePlayers = ["canvas.video@1"]

/** What the tool answers (and the timeline's tool block keeps) of a placed instance. */
export const placedOutput = (instance: WidgetInstance) => ({
  placed: true,
  instanceId: instance.instanceId,
  packageId: instance.packageId,
  version: instance.version,
  widgetId: instance.widgetId,
  revision: instance.revision,
  bindings: instance.bindings.map(({ digest, id, kind }) => ({ id, kind, digest })),
  offeredActions: instance.offeredActions
})

export const make = Effect.gen(function*() {
  const records = yield* PackageRecords
  const instances = yield* WidgetInstances
  const audio = yield* AudioPlayer

  /**
   * The audio player: its one source fetched once under the media policy and stored as a conversation artifact,
   * then the player placed with the node's copy. A refusal places nothing and says which rule refused, in the
   * fetcher's own words (which never hold the URL's path, query or credentials).
   */
  const placeAudio = (context: { readonly conversationId: string; readonly taskId: string }, props: unknown) =>
    audio.place(context, props).pipe(
      Effect.map((placed): PlacementOutcome => ({
        status: "done",
        output: { ...placedOutput(placed), props: placed.props }
      })),
      Effect.catchTags({
        MediaRefused: (refusal) =>
          Effect.succeed<PlacementOutcome>({
            status: "failed",
            output: { error: "MEDIA_REFUSED", rule: refusal.rule, message: refusal.message }
          }),
        ConversationNotFound: () =>
          Effect.succeed(refused("RESOURCE_NOT_FOUND", "The conversation is gone; the audio was not stored"))
      })
    )

  const place: WidgetPlacement["Type"]["place"] = (context, raw) =>
    Effect.gen(function*() {
      const decoded = Schema.decodeUnknownEither(PlacementInput)(raw)
      if (Either.isLeft(decoded)) {
        return refused("INVALID_INPUT", ParseResult.TreeFormatter.formatErrorSync(decoded.left))
      }
      const input = decoded.right
      const props = input.props ?? {}
      if (JSON.stringify(props).length > maxPropsChars) {
        return refused("INVALID_INPUT", `props are at most ${maxPropsChars} characters as JSON`)
      }
      const base = { conversationId: context.conversationId, props, taskId: context.taskId }
      if (input.package === undefined) {
        if (input.widget === audioPlayerWidget) return yield* placeAudio(context, input.props)
        if (!placeablePlayers.includes(input.widget)) {
          return refused("RESOURCE_NOT_FOUND", `No player ${input.widget}; a package widget needs its package`)
        }
        const placed = yield* instances.place({
          ...base,
          packageId: hostPackageId,
          version: "1",
          contentDigest: `host:${input.widget}`,
          widgetId: input.widget,
          bindings: [playerBinding],
          offeredActions: []
        })
        return { status: "done", output: placedOutput(placed) }
      }
      const installed = yield* records.installedOne(input.package)
      if (Option.isNone(installed)) return refused("RESOURCE_NOT_FOUND", `No package ${input.package} is installed`)
      const pkg = installed.value
      const widget = pkg.manifest.widgets.find((w) => w.id === input.widget)
      if (widget === undefined) {
        return refused("RESOURCE_NOT_FOUND", `The package ${pkg.packageId} declares no widget ${input.widget}`)
      }
      const placed = yield* instances.place({
        ...base,
        packageId: pkg.packageId,
        version: pkg.version,
        contentDigest: pkg.contentDigest,
        widgetId: widget.id,
        bindings: widget.bindings as ReadonlyArray<BindingSpec>,
        offeredActions: widget.offeredActions
      })
      return { status: "done", output: placedOutput(placed) }
    })

  return WidgetPlacement.of({ place })
})

export const layer = Layer.effect(WidgetPlacement, make)
