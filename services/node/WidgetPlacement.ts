/**
 * The turn's placement tool (spec, "Widget routes"; docs/decisions.md, "Widget instances"): the assistant places
 * a widget of an installed package, or a host-held video player, in its conversation with props. The instance
 * is stored at revision 1 and the tool's answer (in the timeline's tool block) carries its id, revision and
 * binding digests: what the app needs to draw it and press its buttons.
 */
import { Context, type Effect, Schema } from "effect"
import type { ToolSpec } from "./ModelProvider.js"

export const placeWidgetToolName = "place_widget"

/** Props of one placement, as JSON, at most this many characters. */
export const maxPropsChars = 65_536

export const PlacementInput = Schema.Struct({
  /** The installed package's id; omitted for a host-held player. */
  package: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(214))),
  widget: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  props: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type PlacementInput = typeof PlacementInput.Type

export const placeWidgetTool: ToolSpec = {
  name: placeWidgetToolName,
  description:
    "Place a widget in the conversation: a widget of an installed package (`package` and its `widget` id), the video player (`widget: canvas.video@1`), or the audio player (`widget: canvas.audio@1`, props `{source: {url} | {artifactId}, title?}`: the node fetches the file once under its media policy and plays its own copy), with props.",
  inputSchema: {
    type: "object",
    properties: {
      package: { type: "string" },
      widget: { type: "string" },
      props: { type: "object" }
    },
    required: ["widget"]
  }
}

export interface PlacementOutcome {
  readonly status: "done" | "failed"
  /** What the model reads and the tool block keeps. */
  readonly output: unknown
}

export class WidgetPlacement extends Context.Tag("clark/node/WidgetPlacement")<WidgetPlacement, {
  readonly place: (
    context: { readonly conversationId: string; readonly taskId: string },
    input: unknown
  ) => Effect.Effect<PlacementOutcome>
}>() {}
