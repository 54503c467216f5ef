/** WidgetViews over the instance store, the installed packages, the directory, the package cache and the press log. */
import { Clock, DateTime, Effect, Layer, Option } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { SemanticHeld } from "../../../schema/node/Widget.js"
import type { Widget } from "../../../schema/node/Manifest.js"
import { PackageDirectory } from "../../../services/node/PackageDirectory.js"
import { type InstalledPackage, PackageRecords } from "../../../services/node/PackageRecords.js"
import { InstanceUnknown, NoFrame, WidgetNotInstalled } from "../../../services/node/WidgetErrors.js"
import { hostPackageId, type WidgetInstance, WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { type SemanticDescription, WidgetPressLog } from "../../../services/node/WidgetPressLog.js"
import { WidgetViews } from "../../../services/node/WidgetViews.js"

const playerTitles: Record<string, string> = { "canvas.video@1": "Video player", "canvas.audio@1": "Audio player" }

const held = (instanceId: string, description: Option.Option<SemanticDescription>, accepted?: boolean): SemanticHeld =>
  Option.match(description, {
    onNone: () => ({ instanceId, publishRevision: 0, summary: null, selectedIds: [], values: null, publishedAt: null }),
    onSome: (d) => ({
      instanceId,
      publishRevision: d.publishRevision,
      ...(accepted === undefined ? {} : { accepted }),
      summary: d.summary,
      selectedIds: d.selectedIds,
      values: d.values,
      publishedAt: d.publishedAt
    })
  })

export const make = Effect.gen(function*() {
  const instances = yield* WidgetInstances
  const records = yield* PackageRecords
  const directory = yield* PackageDirectory
  const log = yield* WidgetPressLog

  const find = (conversationId: string, instanceId: string) =>
    Effect.flatMap(instances.get(conversationId, instanceId), Option.match({
      onNone: () => Effect.fail(new InstanceUnknown({ instanceId })),
      onSome: Effect.succeed
    }))

  /**
   * The package as the widget was placed from it, still installed and still what the directory lists (spec,
   * install rule 2). A listing the directory cannot read now (a folder gone, the marketplace away) is no change.
   */
  const installed = (instance: WidgetInstance) =>
    Effect.gen(function*() {
      const pkg = yield* records.installedOne(instance.packageId)
      const gone = new WidgetNotInstalled({ packageId: instance.packageId })
      if (Option.isNone(pkg) || pkg.value.contentDigest !== instance.contentDigest || pkg.value.version !== instance.version) {
        return yield* gone
      }
      const listing = yield* Effect.option(directory.find(instance.packageId))
      const current = Option.flatMap(Option.flatten(listing), (l) => Option.fromNullable(l.installed))
      if (Option.isSome(current) && !current.value.current) return yield* gone
      const widget = pkg.value.manifest.widgets.find((w) => w.id === instance.widgetId)
      if (widget === undefined) return yield* gone
      return { pkg: pkg.value, widget } satisfies { pkg: InstalledPackage; widget: Widget }
    })

  const instance: WidgetViews["Type"]["instance"] = (conversationId, instanceId) =>
    Effect.gen(function*() {
      const found = yield* find(conversationId, instanceId)
      const host = found.packageId === hostPackageId
      const about = host
        ? { title: playerTitles[found.widgetId] ?? found.widgetId, appearanceMode: "adaptive" as const }
        : yield* Effect.map(installed(found), ({ widget }) => ({ title: widget.title, appearanceMode: widget.appearanceMode }))
      const viewState = yield* instances.viewState(conversationId, instanceId)
      return {
        instanceId: found.instanceId,
        conversationId: found.conversationId,
        packageId: found.packageId,
        version: found.version,
        contentDigest: found.contentDigest,
        widgetId: found.widgetId,
        kind: host ? "host" as const : "package" as const,
        ...about,
        props: found.props,
        revision: found.revision,
        bindings: found.bindings.map(({ digest, id, kind, perMinute }) => ({ id, kind, digest, perMinute })),
        offeredActions: found.offeredActions,
        taskId: found.taskId,
        placedAt: found.placedAt,
        viewState: Option.getOrNull(
          Option.map(viewState, ({ sequence, state, stateRevision }) => ({ sequence, stateRevision, state }))
        )
      }
    })

  const frame: WidgetViews["Type"]["frame"] = (conversationId, instanceId) =>
    Effect.gen(function*() {
      const found = yield* find(conversationId, instanceId)
      if (found.packageId === hostPackageId) return yield* new NoFrame({ instanceId })
      const { pkg, widget } = yield* installed(found)
      // The entry is a checked package path (no `..`, not absolute): it stays inside the cache copy.
      return yield* Effect.tryPromise(() => fs.readFile(path.join(pkg.cachePath, widget.entry), "utf8")).pipe(
        Effect.catchAll(() => new WidgetNotInstalled({ packageId: found.packageId }))
      )
    })

  return WidgetViews.of({
    instance,
    frame,
    publish: (conversationId, instanceId, publish) =>
      Effect.gen(function*() {
        yield* find(conversationId, instanceId)
        const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
        const result = yield* log.publish(conversationId, instanceId, {
          publishRevision: publish.publishRevision,
          summary: publish.summary,
          selectedIds: publish.selectedIds,
          values: publish.values ?? null,
          publishedAt: at
        })
        return held(instanceId, Option.some(result.held), result.accepted)
      }),
    described: (conversationId, instanceId) =>
      Effect.gen(function*() {
        yield* find(conversationId, instanceId)
        return held(instanceId, yield* log.described(conversationId, instanceId))
      })
  })
})

export const layer = Layer.effect(WidgetViews, make)
