/**
 * Pressing a widget's bound action (spec, "Widget action press", rules 1-10; docs/decisions.md, "Widget
 * presses"): a tool binding calls its package tool through the execution policy and the effect ledger, an agent
 * binding starts a turn that reads the widget's description as data, a host-held player's binding writes its
 * view state. Every press is checked against the instance as it is now and answered once per invocation id.
 */
import { Context, type Effect } from "effect"
import type { Caller } from "../../schema/node/Security.js"
import type {
  ActionApprovalRequired,
  ActionDone,
  ActionInBackground,
  ActionPress,
  ViewStateWritten
} from "../../schema/node/Widget.js"
import type { WidgetError } from "./WidgetErrors.js"

/** 200 for `done` and view-state writes, 202 for `approval-required` and `background` (the schemas carry the status). */
export type ActionAnswer = typeof ActionDone.Type | typeof ActionApprovalRequired.Type | typeof ActionInBackground.Type
export type PressAnswer = ActionAnswer | typeof ViewStateWritten.Type

export class WidgetPresses extends Context.Tag("clark/node/WidgetPresses")<WidgetPresses, {
  readonly press: (
    caller: Caller,
    conversationId: string,
    instanceId: string,
    press: ActionPress
  ) => Effect.Effect<PressAnswer, WidgetError>
}>() {}
