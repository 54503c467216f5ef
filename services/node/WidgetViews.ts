/**
 * What the app reads of a widget instance (docs/decisions.md, "Widget instances"): the instance as it is now,
 * the frame's HTML from the package cache, and the semantic description the widget published. Each answers
 * 409 NOT_INSTALLED once the package is no longer installed as the widget was placed from, or its listing changed.
 */
import { Context, type Effect } from "effect"
import type { SemanticHeld, SemanticPublish, WidgetInstanceView } from "../../schema/node/Widget.js"
import type { InstanceUnknown, NoFrame, WidgetNotInstalled } from "./WidgetErrors.js"

export class WidgetViews extends Context.Tag("clark/node/WidgetViews")<WidgetViews, {
  readonly instance: (
    conversationId: string,
    instanceId: string
  ) => Effect.Effect<WidgetInstanceView, InstanceUnknown | WidgetNotInstalled>
  readonly frame: (
    conversationId: string,
    instanceId: string
  ) => Effect.Effect<string, InstanceUnknown | WidgetNotInstalled | NoFrame>
  readonly publish: (
    conversationId: string,
    instanceId: string,
    publish: SemanticPublish
  ) => Effect.Effect<SemanticHeld, InstanceUnknown>
  readonly described: (conversationId: string, instanceId: string) => Effect.Effect<SemanticHeld, InstanceUnknown>
}>() {}
