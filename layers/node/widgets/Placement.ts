/** WidgetPlacement over the installed packages and the widget instance store. */
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
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

/** The node's own players: placed without a package (the audio player is placed by its own media tool). */
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
