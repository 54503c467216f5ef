/**
 * A message on its way to becoming a turn: its references checked on arrival
 * (message rule 7), and its cancellation when the turn it waited for is
 * stopped, the node shuts down or crashed (rule 6).
 */
import { Effect, Option } from "effect"
import type { MessageResult, Ref, TimelineEntry } from "../../../schema/node/Conversation.js"
import { ReferenceNotAvailable } from "../../../services/node/ConversationErrors.js"
import type { ConversationStore } from "../../../services/node/ConversationStore.js"
import type { TurnEvent } from "../../../services/node/TurnEngine.js"
import { notes } from "./Agent.js"

/** Rule 7: a reference that no longer resolves refuses the whole message, before anything is stored. */
export const checkReferences = (store: ConversationStore["Type"], refs: ReadonlyArray<Ref>) =>
  Effect.gen(function*() {
    const notices = refs.some((ref) => ref.kind === "notice") ? yield* store.notices : []
    for (const ref of refs) {
      const available = ref.kind === "conversation"
        ? Option.isSome(yield* store.get(ref.id))
        : ref.kind === "notice"
        ? notices.some((n) => n.id === ref.id && n.state !== "dismissed")
        // Skills, projects, files, folders, services and background work are not indexed by this node yet.
        : false
      if (!available) return yield* new ReferenceNotAvailable({ reference: ref })
    }
  })

/**
 * Cancels a message that waited: it stays saved, gets a "stopped before it started" card and, when it had a task,
 * a stored `done` (seq 1), so a resume or a retry of that task ends like any other. Returns that `done`.
 */
export const cancel = (store: ConversationStore["Type"]) =>
(conversationId: string, userMessageId: string, taskId: string | null): Effect.Effect<TurnEvent> =>
  Effect.gen(function*() {
    const user = yield* store.updateMessage(conversationId, userMessageId, { status: "complete" })
    const card = yield* store.insertMessage({
      conversationId,
      role: "assistant",
      origin: null,
      channel: null,
      status: "cancelled",
      note: notes.cancelled,
      taskId,
      blocks: []
    })
    const result = (last: number, entries: ReadonlyArray<TimelineEntry>): MessageResult => ({
      resolution: "cancelled",
      taskId,
      messageIds: [userMessageId, card.messageId],
      timeline: { conversationId, entries, last }
    })
    if (taskId === null) return { taskId: null, seq: 1, event: "done", data: result(card.seq, [user.entry, card]) }
    let done: TurnEvent | undefined
    yield* store.checkpoint([{
      conversationId,
      taskId,
      events: [],
      reply: { messageId: card.messageId, patch: {} },
      closing: (saved) => (done = { taskId, seq: 1, event: "done", data: result(saved.last, [user.entry, saved.entry]) })
    }])
    if (done === undefined) return yield* Effect.dieMessage(`The cancellation of ${taskId} was not stored`)
    return done
  })
