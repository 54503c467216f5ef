/** The node's own tools, offered to the model in every turn. */
import { Effect, Option } from "effect"
import type { ToolSpec } from "../../../services/node/ModelProvider.js"
import type { CallDetails, PackageTools } from "../../../services/node/PackageTools.js"
import { placeWidgetToolName, type WidgetPlacement } from "../../../services/node/WidgetPlacement.js"
import { performToolName } from "../../../services/node/OfferedActionRules.js"
import type { OfferedActions } from "../../../services/node/OfferedActions.js"
import type { Turn } from "./Turn.js"

export interface ToolOutcome {
  readonly status: "done" | "failed"
  readonly output: unknown
  /** The turn ends after this tool (a question waits for the person's answer, which starts a new turn). */
  readonly endsTurn?: boolean | undefined
  /** A package tool's call: what the tool block and `tool-end` show besides the status. */
  readonly details?: CallDetails | undefined
}

export const tools: ReadonlyArray<ToolSpec> = [
  {
    name: "ask_user_question",
    description: "Ask the person a question and end the turn; their answer starts a new turn.",
    inputSchema: {
      type: "object",
      properties: {
        question: { type: "string" },
        options: { type: "array", items: { type: "object", properties: { id: { type: "string" }, label: { type: "string" } } } },
        allowText: { type: "boolean" }
      },
      required: ["question"]
    }
  },
  {
    name: "host_control",
    description:
      "Ask the app to change something: open settings on a tab, switch the model, start or end voice mode, return to the conversation.",
    inputSchema: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["open-settings", "switch-model", "start-voice", "end-voice", "return-to-conversation"] },
        tab: { type: "string" },
        model: { type: "string" }
      },
      required: ["action"]
    }
  }
]

/**
 * Runs a tool call of the model: the node's own tools by name, every other name as an installed package's tool
 * (an engine without packages answers that the tool is unknown).
 */
export const runner = (own: {
  readonly askUserQuestion: (turn: Turn, input: unknown) => Effect.Effect<ToolOutcome>
  readonly hostControl: (turn: Turn, input: unknown) => Effect.Effect<ToolOutcome>
}, packageTools: Option.Option<PackageTools["Type"]>, placement: Option.Option<WidgetPlacement["Type"]> = Option.none(), offers: {
  readonly service: Option.Option<OfferedActions["Type"]>
  /** The `widget-action-requested` event of the turn's stream. */
  readonly emit: (turn: Turn, data: unknown) => void
} = { service: Option.none(), emit: () => {} }) =>
(turn: Turn, name: string, input: unknown): Effect.Effect<ToolOutcome> => {
  switch (name) {
    case performToolName:
      if (Option.isSome(offers.service)) {
        return offers.service.value.perform({
          taskId: turn.taskId,
          conversationId: turn.conversationId,
          origin: turn.origin,
          channel: turn.channel,
          emit: (data) => offers.emit(turn, data)
        }, input)
      }
      break
    case "ask_user_question":
      return own.askUserQuestion(turn, input)
    case "host_control":
      return own.hostControl(turn, input)
    case placeWidgetToolName:
      if (Option.isSome(placement)) {
        return placement.value.place({ conversationId: turn.conversationId, taskId: turn.taskId }, input)
      }
      break
  }
  return Option.match(packageTools, {
    onNone: () => Effect.succeed({ status: "failed" as const, output: { error: `unknown tool ${name}` } }),
    onSome: (tools) =>
      tools.call(
        { taskId: turn.taskId, conversationId: turn.conversationId, origin: turn.origin, channel: turn.channel },
        name,
        input
      )
  })
}
