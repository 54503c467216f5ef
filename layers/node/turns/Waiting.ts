/**
 * A message on its way to becoming a turn: its cancellation when the turn it
 * waited for is stopped, the node shuts down or crashed (rule 6). Its references
 * are checked on arrival by the Composer (rule 7).
 */
import { Effect } from "effect"
import type { MessageResult } from "../../../schema/node/Conversation.js"
import type { ConversationStore } from "../../../services/node/ConversationStore.js"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"
import { notes } from "./Agent.js"

/** The card of a message cancelled before it started: the message stays saved, the card says why. */
export const cancelledCard = (store: ConversationStore["Type"], conversationId: string, userMessageId: string, taskId: string | null) =>
  Effect.zip(
    store.updateMessage(conversationId, userMessageId, { status: "complete" }),
    store.insertMessage({
      conversationId,
      role: "assistant",
      origin: null,
      channel: null,
      status: "cancelled",
      note: notes.cancelled,
      taskId,
      blocks: []
    })
  )

/**
 * Cancels a message that waited for its task: its card, and a stored `done` (seq 1) under that task, so a resume or
 * a retry of it ends like any other. Returns that `done`.
 */
export const cancel = (store: ConversationStore["Type"]) =>
(conversationId: string, userMessageId: string, taskId: string): Effect.Effect<TurnEvent> =>
  Effect.gen(function*() {
    const [user, card] = yield* cancelledCard(store, conversationId, userMessageId, taskId)
    let done: TurnEvent | undefined
    yield* store.checkpoint([{
      conversationId,
      taskId,
      events: [],
      reply: { messageId: card.messageId, patch: {} },
      closing: (saved) => {
        const data: MessageResult = {
          resolution: "cancelled",
          taskId,
          messageIds: [userMessageId, card.messageId],
          timeline: { conversationId, entries: [user.entry, saved.entry], last: saved.last }
        }
        return (done = { taskId, seq: 1, event: "done", data })
      }
    }])
    if (done === undefined) return yield* Effect.dieMessage(`The cancellation of ${taskId} was not stored`)
    return done
  })

/** What stopping every conversation ended, summed; jobs and package commands are counted by their own owners. */
export const stoppedTotals = (all: ReadonlyArray<{ readonly turns: number; readonly waiting: number }>) => ({
  turns: all.reduce((n, s) => n + s.turns, 0),
  waiting: all.reduce((n, s) => n + s.waiting, 0),
  jobs: 0,
  commands: 0
})
