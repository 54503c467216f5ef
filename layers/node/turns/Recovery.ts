/**
 * Start-up after a crash or kill -9: a reply cut off while writing is rebuilt
 * from its stored events and labelled stopped, and its terminal `done` event is
 * stored, so a Last-Event-ID resume or a clientRequestId retry of that turn
 * ends like any other; a message left waiting is cancelled.
 */
import { Effect } from "effect"
import type { Block, MessageResult } from "../../../schema/node/Conversation.js"
import type { ConversationStore, StoredEvent } from "../../../services/node/ConversationStore.js"
import { notes } from "./Agent.js"
import { cancel, cancelledCard } from "./Waiting.js"
import { appendText, replaceBlock } from "./Turn.js"

/** A reply's blocks as its stored events built them. */
export const rebuild = (events: ReadonlyArray<StoredEvent>): Array<Block> => {
  const blocks: Array<Block> = []
  for (const e of events) {
    const data = e.data as Record<string, unknown>
    if (e.event === "delta") appendText(blocks, "text", String(data.text))
    else if (e.event === "reasoning") appendText(blocks, "reasoning", String(data.text))
    else if (e.event === "tool-start") {
      blocks.push({ type: "tool", toolCallId: String(data.toolCallId), name: String(data.name), input: data.input, status: "running" })
    } else if (e.event === "tool-end") {
      const started = blocks.find((b) => b.type === "tool" && b.toolCallId === data.toolCallId) as { input?: unknown } | undefined
      replaceBlock(blocks, (b) => b.type === "tool" && b.toolCallId === data.toolCallId, {
        type: "tool",
        toolCallId: String(data.toolCallId),
        name: String(data.name),
        input: started?.input,
        output: data.output,
        status: data.status === "failed" ? "failed" : "done"
      })
    }
  }
  return blocks
}

export const recover = (store: ConversationStore["Type"]) =>
  Effect.gen(function*() {
    const cancelWaiting = cancel(store)
    for (const message of yield* store.unfinished) {
      const { conversationId, messageId, taskId } = message
      if (message.status === "waiting") {
        // Messages stored before task ids were taken on arrival have none: a card, and no `done` to resume.
        yield* taskId === null ? cancelledCard(store, conversationId, messageId, null) : cancelWaiting(conversationId, messageId, taskId)
        continue
      }
      if (taskId === null) {
        yield* store.updateMessage(conversationId, messageId, { status: "stopped", note: notes.restart })
        continue
      }
      const events = yield* store.events(taskId, 0)
      if (events.some((e) => e.event === "done")) continue
      const { entries } = yield* store.taskEntries(conversationId, taskId, [])
      const user = entries.find((e) => e.role === "user")
      yield* store.checkpoint([{
        conversationId,
        taskId,
        events: [],
        reply: { messageId, patch: { status: "stopped", note: notes.restart, blocks: rebuild(events) } },
        closing: (saved) => ({
          seq: (events.at(-1)?.seq ?? 0) + 1,
          event: "done",
          data: {
            resolution: "stopped",
            taskId,
            messageIds: user === undefined ? [messageId] : [user.messageId, messageId],
            timeline: {
              conversationId,
              entries: [...entries.filter((e) => e.messageId !== messageId), saved.entry].sort((a, b) => a.seq - b.seq),
              last: saved.last
            }
          } satisfies MessageResult
        })
      }])
      yield* store.insertNotice({
        kind: "work-failed",
        conversationId,
        subjectId: taskId,
        data: { reason: "restart", note: notes.restart }
      })
    }
  })
