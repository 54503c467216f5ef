/**
 * What still runs or waits in a conversation: the seam conversation deletion asks before it deletes anything
 * (spec, "Conversation deletion"). Each kind of work answers for itself; jobs and widget actions, built by
 * later issues, add their own `ActivitySource` (layers/node/ConversationActivity.ts takes them as a list).
 */
import { Context, type Effect } from "effect"

export type UnsettledKind =
  | "turn"
  | "question"
  | "task-approval"
  | "unknown-effect"
  | "background-work"
  | "widget-action"
  | "job"

export interface Unsettled {
  readonly kind: UnsettledKind
  readonly id: string
}

/** One kind of work's answer to "what of yours still runs or waits in conversation X". */
export type ActivitySource = (conversationId: string) => Effect.Effect<ReadonlyArray<Unsettled>>

export class ConversationActivity extends Context.Tag("clark/node/ConversationActivity")<ConversationActivity, {
  readonly unsettled: ActivitySource
}>() {}

const phrases: Record<UnsettledKind, readonly [string, string]> = {
  turn: ["a reply is still being written", "replies are still being written"],
  question: ["a question is waiting for an answer", "questions are waiting for answers"],
  "task-approval": ["a step is waiting for your approval", "steps are waiting for your approval"],
  "unknown-effect": [
    "an action may or may not have happened and needs your answer in the inbox",
    "actions may or may not have happened and need your answers in the inbox"
  ],
  "background-work": ["background work is still running", "background work is still running"],
  "widget-action": ["a widget action is still settling", "widget actions are still settling"],
  job: ["a job is still running", "jobs are still running"]
}

const order: ReadonlyArray<UnsettledKind> = [
  "turn",
  "job",
  "background-work",
  "widget-action",
  "question",
  "task-approval",
  "unknown-effect"
]

/** The sentence read back when deletion is refused: every kind that blocks it, in a fixed order. */
export const refusalSay = (unsettled: ReadonlyArray<Unsettled>): string => {
  const parts = order.flatMap((kind) => {
    const count = unsettled.filter((u) => u.kind === kind).length
    return count === 0 ? [] : [phrases[kind][count === 1 ? 0 : 1]]
  })
  const listed = parts.length <= 1 ? parts.join("") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`
  return `This conversation can't be deleted yet: ${listed}.`
}
