/** ConversationStore on the node's SQLite database. */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import type { Block, MessageStatus, TimelineEntry } from "../../../schema/node/Conversation.js"
import type { Channel, Surface } from "../../../schema/node/Security.js"
import { makeId } from "../../../services/common/Ids.js"
import {
  ConversationStore,
  type MessagePatch,
  type NewMessage,
  type StoredEvent
} from "../../../services/node/ConversationStore.js"
import { num, type Row, str, strOrNull } from "./Columns.js"
import * as Direct from "./Direct.js"
import * as SqlQuestions from "./SqlQuestions.js"

const toEntry = (row: Row): TimelineEntry => ({
  seq: num(row.seq),
  messageId: str(row.id),
  role: str(row.role) as "user" | "assistant",
  origin: strOrNull(row.origin) as Surface | null,
  channel: strOrNull(row.channel) as Channel | null,
  status: str(row.status) as MessageStatus,
  note: strOrNull(row.note),
  ...(row.hostWritten === null || row.hostWritten === undefined
    ? {}
    : { hostWritten: JSON.parse(str(row.hostWritten)) as { kind: string; version: number } }),
  taskId: strOrNull(row.taskId),
  blocks: JSON.parse(str(row.blocks)) as Array<Block>,
  createdAt: str(row.createdAt),
  updatedAt: str(row.updatedAt)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A new message's two statements and a checkpoint's, in a unit (every turn start, checkpoint and widget press):
  // without the client's span (Direct.ts).
  const run = Direct.run
  // What DateTime.formatIso writes for a UTC instant, without making a DateTime first: every message and audit
  // entry takes one, a start two.
  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  /**
   * `effect` as one transaction, or as part of the caller's when there is one (turn start-up): a savepoint there
   * would only add statements, since the caller's unit is undone whole when it fails.
   */
  const inTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(
      Effect.serviceOption(SqlClient.TransactionConnection),
      Option.match({ onNone: () => sql.withTransaction(effect), onSome: () => effect })
    )

  /** Takes the next revision of a conversation. */
  const bump = (conversationId: string) =>
    run(sql<Row>`UPDATE conversations SET rev = rev + 1 WHERE id = ${conversationId} RETURNING rev`).pipe(
      Effect.map(([row]) => num(row!.rev))
    )

  // The generators of the store's per-call work are made once, here: on Node 20 a generator function made per call
  // gets a map of its own, which keeps what it captured alive through scavenges until a full collection
  // (docs/decisions.md).
  const insertConversation = Effect.fnUntraced(function*(homeNodeId: string, title: string | null) {
    const id = yield* makeId("conv")
    const at = yield* now
    yield* sql`INSERT INTO conversations ${
      sql.insert({ id, homeNodeId, title, rev: 0, nextSeq: 0, createdAt: at, updatedAt: at })
    }`
    return { id, homeNodeId, title }
  })
  const create: ConversationStore["Type"]["create"] = (homeNodeId, title) =>
    insertConversation(homeNodeId, title).pipe(Effect.orDie)

  const get: ConversationStore["Type"]["get"] = (id) =>
    sql<Row>`SELECT id, home_node_id, title FROM conversations WHERE id = ${id}`.pipe(
      Effect.map(([row]) =>
        Option.map(Option.fromNullable(row), (row) => ({
          id: str(row.id),
          homeNodeId: str(row.homeNodeId),
          title: strOrNull(row.title)
        }))
      ),
      Effect.orDie
    )

  const list: ConversationStore["Type"]["list"] = sql<Row>`SELECT id, home_node_id, title, created_at, updated_at
    FROM conversations ORDER BY updated_at DESC, id`.pipe(
    Effect.map((rows) =>
      rows.map((row) => ({
        conversationId: str(row.id),
        homeNodeId: str(row.homeNodeId),
        title: strOrNull(row.title),
        createdAt: str(row.createdAt),
        updatedAt: str(row.updatedAt)
      }))
    ),
    Effect.orDie
  )

  /**
   * Inserts messages of one conversation under new revisions and seqs, in order: one statement takes the numbers
   * and one inserts the rows; none when the conversation does not exist (the first statement finds no row). The
   * caller provides the transaction.
   */
  const insertRows = Effect.fnUntraced(function*(conversationId: string, messages: ReadonlyArray<Omit<NewMessage, "conversationId">>) {
    const at = yield* now
    const count = messages.length
    const [taken] = yield* run(sql<Row>`UPDATE conversations SET rev = rev + ${count}, next_seq = next_seq + ${count},
      updated_at = ${at} WHERE id = ${conversationId} RETURNING rev, next_seq`)
    if (taken === undefined) return []
    const firstRev = num(taken!.rev) - count + 1
    const firstSeq = num(taken!.nextSeq) - count + 1
    const entries: Array<TimelineEntry> = []
    for (const [i, message] of messages.entries()) {
      entries.push({
        seq: firstSeq + i,
        messageId: yield* makeId("msg"),
        role: message.role,
        origin: message.origin,
        channel: message.channel,
        status: message.status,
        note: message.note ?? null,
        ...(message.hostWritten === undefined ? {} : { hostWritten: message.hostWritten }),
        taskId: message.taskId,
        blocks: message.blocks,
        createdAt: at,
        updatedAt: at
      })
    }
    yield* run(sql`INSERT INTO messages ${
      sql.insert(entries.map((entry, i) => ({
        id: entry.messageId,
        conversationId,
        seq: entry.seq,
        rev: firstRev + i,
        role: entry.role,
        origin: entry.origin,
        channel: entry.channel,
        status: entry.status,
        note: entry.note,
        hostWritten: entry.hostWritten === undefined ? null : JSON.stringify(entry.hostWritten),
        taskId: entry.taskId,
        blocks: JSON.stringify(entry.blocks),
        createdAt: at,
        updatedAt: at
      })))
    }`)
    return entries
  })

  const insertMessages: ConversationStore["Type"]["insertMessages"] = (conversationId, messages) =>
    messages.length === 0
      ? Effect.succeed([])
      : inTransaction(insertRows(conversationId, messages)).pipe(Effect.orDie)

  const insertMessage: ConversationStore["Type"]["insertMessage"] = (message) =>
    inTransaction(insertRows(message.conversationId, [message])).pipe(
      Effect.orDie,
      Effect.flatMap(([entry]) =>
        entry === undefined ? Effect.dieMessage(`No conversation ${message.conversationId} to store a message in`) : Effect.succeed(entry))
    )

  /** The UPDATE that writes a patch under the message's new revision `rev`, taken by the caller. */
  const patchStatement = (messageId: string, rev: number, at: string, patch: MessagePatch) => {
    const set: Record<string, unknown> = { rev, updatedAt: at }
    if (patch.status !== undefined) set.status = patch.status
    if (patch.note !== undefined) set.note = patch.note
    if (patch.blocks !== undefined) set.blocks = JSON.stringify(patch.blocks)
    if (patch.taskId !== undefined) set.taskId = patch.taskId
    return sql<Row>`UPDATE messages SET ${sql.update(set)} WHERE id = ${messageId}`
  }

  /**
   * Takes a message's new revision and returns it with the UPDATE that writes the patch under it; the caller runs
   * that (with RETURNING when it needs the row) in its transaction.
   */
  const patchUpdate = Effect.fnUntraced(function*(conversationId: string, messageId: string, patch: MessagePatch) {
    const at = yield* now
    const rev = yield* bump(conversationId)
    return { rev, update: patchStatement(messageId, rev, at, patch) }
  })

  /** Changes a message under a new revision and returns it as changed; the caller provides the transaction. */
  const applyPatch = (conversationId: string, messageId: string, patch: MessagePatch) =>
    Effect.flatMap(patchUpdate(conversationId, messageId, patch), saved)

  /** Runs a patch's UPDATE and answers the message as saved, with the revision it took. */
  const saved = ({ rev, update }: { readonly rev: number; readonly update: Statement.Statement<Row> }) =>
    Effect.map(run(sql<Row>`${update} RETURNING *`), ([row]) => ({ entry: toEntry(row!), last: rev }))

  const updateMessage: ConversationStore["Type"]["updateMessage"] = (conversationId, messageId, patch) =>
    inTransaction(applyPatch(conversationId, messageId, patch)).pipe(Effect.orDie)

  const message: ConversationStore["Type"]["message"] = (messageId) =>
    sql<Row>`SELECT * FROM messages WHERE id = ${messageId}`.pipe(
      Effect.map(([row]) => Option.map(Option.fromNullable(row), toEntry)),
      Effect.orDie
    )

  const readTimeline = Effect.fnUntraced(function*(conversationId: string, after: number) {
    const [conversation] = yield* sql<Row>`SELECT rev FROM conversations WHERE id = ${conversationId}`
    const rows = yield* sql<Row>`SELECT * FROM messages WHERE conversation_id = ${conversationId} AND rev > ${after}
      ORDER BY seq`
    return { entries: rows.map(toEntry), last: num(conversation?.rev ?? 0) }
  })
  const timeline: ConversationStore["Type"]["timeline"] = (conversationId, after) =>
    readTimeline(conversationId, after).pipe(Effect.orDie)

  const readTaskEntries = Effect.fnUntraced(function*(
    conversationId: string,
    taskId: string | null,
    messageIds: ReadonlyArray<string>
  ) {
    const byTask = taskId === null ? sql`1 = 0` : sql`task_id = ${taskId}`
    const byId = messageIds.length === 0 ? sql`1 = 0` : sql.in("id", messageIds)
    const [conversation] = yield* sql<Row>`SELECT rev FROM conversations WHERE id = ${conversationId}`
    const rows = yield* sql<Row>`SELECT * FROM messages WHERE conversation_id = ${conversationId}
      AND (${byTask} OR ${byId}) ORDER BY seq`
    return { entries: rows.map(toEntry), last: num(conversation?.rev ?? 0) }
  })
  const taskEntries: ConversationStore["Type"]["taskEntries"] = (conversationId, taskId, messageIds) =>
    readTaskEntries(conversationId, taskId, messageIds).pipe(Effect.orDie)

  /**
   * Inserts event rows in chunks of 128, 64, ... 1 rows: a multi-row INSERT is one statement, and with a fixed
   * set of shapes its prepared statements stay in the client's cache however the batches vary.
   */
  const insertEvents = (rows: ReadonlyArray<{ taskId: string; seq: number; event: string; data: string }>) =>
    Effect.suspend(() => {
      const chunks: Array<typeof rows> = []
      for (let at = 0, size = 128; at < rows.length; size = size > 1 ? size >> 1 : 1) {
        while (rows.length - at >= size) {
          chunks.push(rows.slice(at, at + size))
          at += size
        }
      }
      return Effect.forEach(chunks, (chunk) => run(sql`INSERT INTO turn_events ${sql.insert(chunk)}`), { discard: true })
    })

  const eventRow = (taskId: string, event: StoredEvent) => ({
    taskId,
    seq: event.seq,
    event: event.event,
    data: JSON.stringify(event.data)
  })

  /**
   * The next revision of each of several different conversations, in one statement; undefined when a conversation
   * is named twice (each needs its own revision) or there is only one.
   */
  const bumpAll = (conversationIds: ReadonlyArray<string>) =>
    conversationIds.length < 2 || new Set(conversationIds).size < conversationIds.length
      ? Effect.succeed(undefined)
      : Effect.map(
        run(sql<Row>`UPDATE conversations SET rev = rev + 1 WHERE ${sql.in("id", conversationIds)} RETURNING id, rev`),
        (rows) => new Map(rows.map((row) => [str(row.id), num(row.rev)]))
      )

  /**
   * The turns of a checkpoint take their conversations' revisions together (the turns an emergency stop ends are
   * written 16 at a time: one statement for their 16 revisions instead of 16), then each writes its reply.
   */
  const writeCheckpoint = Effect.fnUntraced(function*(checkpoints: Parameters<ConversationStore["Type"]["checkpoint"]>[0]) {
    yield* insertEvents(checkpoints.flatMap(({ events, taskId }) => events.map((e) => eventRow(taskId, e))))
    const at = yield* now
    const revs = yield* bumpAll(checkpoints.map((c) => c.conversationId))
    const closing: Array<ReturnType<typeof eventRow>> = []
    for (const { closing: close, conversationId, reply, taskId } of checkpoints) {
      const taken = revs?.get(conversationId)
      if (revs !== undefined && taken === undefined) return yield* Effect.dieMessage(`No conversation ${conversationId}`)
      const patched = taken === undefined
        ? yield* patchUpdate(conversationId, reply.messageId, reply.patch)
        : { rev: taken, update: patchStatement(reply.messageId, taken, at, reply.patch) }
      // Only an ending turn needs the reply as saved (its `done` event); the others skip reading it back.
      if (close === undefined) yield* run(patched.update)
      else closing.push(eventRow(taskId, close(yield* saved(patched))))
    }
    yield* insertEvents(closing)
  })
  const checkpoint: ConversationStore["Type"]["checkpoint"] = (checkpoints) =>
    inTransaction(writeCheckpoint(checkpoints)).pipe(Effect.orDie)

  const events: ConversationStore["Type"]["events"] = (taskId, afterSeq) =>
    sql<Row>`SELECT seq, event, data FROM turn_events WHERE task_id = ${taskId} AND seq > ${afterSeq} ORDER BY seq`.pipe(
      Effect.map((rows) => rows.map((row) => ({ seq: num(row.seq), event: str(row.event), data: JSON.parse(str(row.data)) }))),
      Effect.orDie
    )

  const clientRequest: ConversationStore["Type"]["clientRequest"] = (conversationId, clientRequestId) =>
    sql<Row>`SELECT message_id, task_id FROM client_requests
      WHERE conversation_id = ${conversationId} AND client_request_id = ${clientRequestId}`.pipe(
      Effect.map(([row]) =>
        Option.map(Option.fromNullable(row), (row) => ({ messageId: str(row.messageId), taskId: strOrNull(row.taskId) }))
      ),
      Effect.orDie
    )

  const saveClientRequest: ConversationStore["Type"]["saveClientRequest"] = (
    conversationId,
    clientRequestId,
    messageId,
    taskId
  ) =>
    sql`INSERT INTO client_requests ${sql.insert({ conversationId, clientRequestId, messageId, taskId })}
      ON CONFLICT (conversation_id, client_request_id) DO UPDATE SET task_id = excluded.task_id`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const questions = SqlQuestions.make(sql, now)

  const insertNotice: ConversationStore["Type"]["insertNotice"] = (notice) =>
    Effect.gen(function*() {
      const id = yield* makeId("ntc")
      const at = yield* now
      yield* sql`INSERT INTO notices ${
        sql.insert({
          id,
          kind: notice.kind,
          conversationId: notice.conversationId,
          subjectId: notice.subjectId,
          data: JSON.stringify(notice.data),
          state: "unread",
          createdAt: at
        })
      }`
      return id
    }).pipe(Effect.orDie)

  const notices: ConversationStore["Type"]["notices"] = sql<Row>`SELECT id, kind, subject_id, state FROM notices
    ORDER BY created_at`.pipe(
    Effect.map((rows) =>
      rows.map((row) => ({ id: str(row.id), kind: str(row.kind), subjectId: strOrNull(row.subjectId), state: str(row.state) }))
    ),
    Effect.orDie
  )

  const unfinished: ConversationStore["Type"]["unfinished"] = sql<Row>`SELECT * FROM messages
    WHERE status IN ('writing', 'waiting') ORDER BY conversation_id, seq`.pipe(
    Effect.map((rows) => rows.map((row) => ({ ...toEntry(row), conversationId: str(row.conversationId) }))),
    Effect.orDie
  )

  return ConversationStore.of({
    create,
    get,
    list,
    insertMessage,
    insertMessages,
    updateMessage,
    message,
    timeline,
    taskEntries,
    checkpoint,
    events,
    clientRequest,
    saveClientRequest,
    ...questions,
    insertNotice,
    notices,
    unfinished
  })
})

export const layer = Layer.effect(ConversationStore, make)
