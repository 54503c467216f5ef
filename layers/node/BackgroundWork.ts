/**
 * Background work's retry and cancel over the turn engine (docs/decisions.md, "Background work"): retrying a
 * message's task submits the same request (its text, references and host-written mark) as a new turn of the
 * same conversation, under the caller's origin. Retries are one at a time on the node: the check that the work
 * was not retried, the submission and the record of the retry cannot interleave with another press.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Schema } from "effect"
import { Block, type MessageRequest } from "../../schema/node/Conversation.js"
import { Activity } from "../../services/node/Activity.js"
import { AuditLog } from "../../services/node/AuditLog.js"
import { BackgroundWork, isRetryable } from "../../services/node/BackgroundWork.js"
import {
  AlreadyRetried,
  BackgroundBusy,
  WorkNotFound,
  WorkNotRetryable,
  WorkNotRunning
} from "../../services/node/InboxErrors.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"

const FirstMessage = Schema.Struct({
  blocks: Schema.parseJson(Schema.Array(Block)),
  hostWritten: Schema.NullOr(Schema.parseJson(Schema.Struct({ kind: Schema.String, version: Schema.Number })))
})
const decodeFirst = Schema.decodeUnknown(Schema.Array(FirstMessage))

/** The request a task's first message was: its text and references (attachments are not stored with it). */
const requestOf = (blocks: ReadonlyArray<typeof Block.Type>): MessageRequest => {
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n")
  const references = blocks.find((b) => b.type === "references")
  return references !== undefined && "items" in references
    ? { text, references: { version: 1, items: references.items } }
    : { text }
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const activity = yield* Activity
  const engine = yield* TurnEngine
  const audit = yield* AuditLog
  const oneAtATime = yield* Effect.makeSemaphore(1)

  const retriedAs = (workId: string) =>
    sql<{ retriedAs: string }>`SELECT retried_as FROM work_retries WHERE work_id = ${workId}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]?.retriedAs)),
      Effect.orDie
    )

  const retry: BackgroundWork["Type"]["retry"] = (workId, caller) =>
    oneAtATime.withPermits(1)(Effect.gen(function*() {
      const already = yield* retriedAs(workId)
      if (Option.isSome(already)) return yield* new AlreadyRetried({ workId, retriedAs: already.value })
      const item = yield* activity.workItem(workId)
      if (Option.isNone(item) || item.value.conversationId === null) return yield* new WorkNotFound({ workId })
      if (!isRetryable(item.value.status)) return yield* new WorkNotRetryable({ workId, status: item.value.status })
      const conversationId = item.value.conversationId
      // A retry is new work of its own: it is never steered into, nor queued behind, a running turn.
      if (yield* engine.isRunning(conversationId)) return yield* new BackgroundBusy({ reason: "conversation-busy" })
      const first = yield* sql`SELECT blocks, host_written FROM messages
        WHERE task_id = ${workId} AND role = 'user' ORDER BY seq LIMIT 1`.pipe(Effect.flatMap(decodeFirst), Effect.orDie)
      if (first[0] === undefined) return yield* new WorkNotFound({ workId })
      const ticket = yield* engine.submit({
        conversationId,
        request: requestOf(first[0].blocks),
        caller,
        route: "wait",
        hostWritten: first[0].hostWritten ?? undefined
      }).pipe(
        Effect.catchTags({
          ConversationNotFound: () => new WorkNotFound({ workId }),
          ReferenceNotAvailable: () => new WorkNotRetryable({ workId, status: "reference-not-available" })
        })
      )
      if (ticket.taskId === null || ticket.disposition === "steered") {
        return yield* new BackgroundBusy({ reason: "conversation-busy" })
      }
      const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
      yield* sql`INSERT INTO work_retries ${
        sql.insert({ workId, retriedAs: ticket.taskId, conversationId, retriedAt: at })
      }`.pipe(Effect.orDie)
      yield* audit.append({
        kind: "work-retried",
        conversationId,
        surface: caller.surface,
        channel: caller.channel,
        detail: { workId, taskId: ticket.taskId }
      })
      return { workId: ticket.taskId, retryOf: workId }
    }))

  const cancel: BackgroundWork["Type"]["cancel"] = (workId, caller) =>
    Effect.gen(function*() {
      const item = yield* activity.workItem(workId)
      if (Option.isNone(item) || item.value.conversationId === null) return yield* new WorkNotFound({ workId })
      if (item.value.status !== "running") return yield* new WorkNotRunning({ workId, status: item.value.status })
      // One running turn per conversation: the running work is the conversation's running turn.
      const accepted = yield* engine.stop(item.value.conversationId, "api", caller).pipe(
        Effect.catchTag("ConversationNotFound", () => new WorkNotFound({ workId }))
      )
      return { accepted, workId }
    })

  return BackgroundWork.of({ retry, cancel })
})

export const layer = Layer.effect(BackgroundWork, make)
