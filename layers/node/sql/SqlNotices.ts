/**
 * The inbox's rows on the node's SQLite database: notices with what the person did to them, suppressed sources
 * and skipped versions. Every change of a notice is one conditional write (`… WHERE <the state it needs>
 * RETURNING id`): of identical actions sent at once exactly one changes anything, the others find the notice
 * already changed and are refused as the rules say.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { NewNotice } from "../../../services/node/Inbox.js"
import type { NoticeRecord } from "../../../services/node/Notices.js"

const NoticeRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  conversationId: Schema.NullOr(Schema.String),
  subjectId: Schema.NullOr(Schema.String),
  data: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  createdAt: Schema.String,
  readAt: Schema.NullOr(Schema.String),
  dismissedAt: Schema.NullOr(Schema.String),
  snoozedUntil: Schema.NullOr(Schema.String),
  source: Schema.NullOr(Schema.String),
  suppressed: Schema.transform(Schema.Number, Schema.Boolean, { decode: (n) => n !== 0, encode: (b) => (b ? 1 : 0) }),
  busySince: Schema.NullOr(Schema.String),
  conversationExists: Schema.NullOr(Schema.Number),
  workExists: Schema.Number
})
const decodeNotices = Schema.decodeUnknown(Schema.Array(NoticeRow))

const SkippedRow = Schema.Struct({
  kind: Schema.Literal("package", "pi"),
  name: Schema.String,
  version: Schema.String,
  skippedAt: Schema.String
})
const decodeSkipped = Schema.decodeUnknown(Schema.Array(SkippedRow))

/** A notice with what its read needs to know: whether its conversation and its work still exist. */
export interface StoredNotice extends NoticeRecord {
  readonly conversationExists: number | null
  readonly workExists: number
}

/** A page's cursor: the last notice's `createdAt` and id, opaque to clients. */
export const cursorOf = (notice: { readonly createdAt: string; readonly id: string }) =>
  Buffer.from(`${notice.createdAt}\u0000${notice.id}`).toString("base64url")

const fromCursor = (cursor: string | undefined) => {
  if (cursor === undefined) return Option.none<readonly [string, string]>()
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString().split("\u0000")
  return at === undefined || id === undefined || rest.length > 0 ? Option.none() : Option.some([at, id] as const)
}

export type Change = "read" | "unread" | "dismiss" | "restore" | "snooze" | "unsnooze"

export const make = (sql: SqlClient.SqlClient, now: Effect.Effect<string>) => {
  // What the actions' `unavailable` needs is read with the notice, not by further statements.
  const select = sql`SELECT n.id, n.kind, n.conversation_id, n.subject_id, n.data, n.created_at, n.read_at,
      n.dismissed_at, n.snoozed_until, n.source, n.busy_since, (s.source IS NOT NULL) AS suppressed,
      CASE WHEN n.conversation_id IS NULL THEN NULL
        ELSE EXISTS (SELECT 1 FROM conversations c WHERE c.id = n.conversation_id) END AS conversation_exists,
      CASE WHEN n.kind = 'work-failed' THEN EXISTS (SELECT 1 FROM messages m WHERE m.task_id = n.subject_id)
        ELSE 0 END AS work_exists
    FROM notices n LEFT JOIN notice_suppressions s ON s.source = n.source`

  /** Newest first, dismissed notices left out; one more than asked for, to tell whether a next page exists. */
  const page = (limit: number, before: string | undefined): Effect.Effect<ReadonlyArray<StoredNotice>> =>
    Option.match(fromCursor(before), {
      onNone: () => sql`${select} WHERE n.dismissed_at IS NULL ORDER BY n.created_at DESC, n.id DESC LIMIT ${limit + 1}`,
      onSome: ([at, id]) =>
        sql`${select} WHERE n.dismissed_at IS NULL AND (n.created_at < ${at} OR (n.created_at = ${at} AND n.id < ${id}))
          ORDER BY n.created_at DESC, n.id DESC LIMIT ${limit + 1}`
    }).pipe(Effect.flatMap(decodeNotices), Effect.orDie)

  const get = (id: string): Effect.Effect<Option.Option<StoredNotice>> =>
    sql`${select} WHERE n.id = ${id}`.pipe(
      Effect.flatMap(decodeNotices),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const insert = (id: string, notice: NewNotice): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      const at = yield* now
      const rows = yield* sql`INSERT INTO notices ${
        sql.insert({
          id,
          kind: notice.kind,
          conversationId: notice.conversationId,
          subjectId: notice.subjectId,
          data: JSON.stringify(notice.data),
          state: "unread",
          createdAt: at,
          source: notice.source ?? null
        })
      } ON CONFLICT (id) DO NOTHING RETURNING id`
      return rows.length > 0
    }).pipe(Effect.orDie)

  const isSuppressed = (source: string) =>
    sql`SELECT 1 FROM notice_suppressions WHERE source = ${source}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  /** One conditional write per change; false when the notice was not in the state the change needs. */
  const change = (id: string, what: Change, until?: string): Effect.Effect<boolean> =>
    Effect.gen(function*() {
      const at = yield* now
      const statement = (() => {
        switch (what) {
          case "read":
            return sql`UPDATE notices SET read_at = ${at}, state = 'read'
              WHERE id = ${id} AND read_at IS NULL AND dismissed_at IS NULL RETURNING id`
          case "unread":
            return sql`UPDATE notices SET read_at = NULL, state = 'unread'
              WHERE id = ${id} AND read_at IS NOT NULL AND dismissed_at IS NULL RETURNING id`
          case "dismiss":
            return sql`UPDATE notices SET dismissed_at = ${at}, state = 'dismissed'
              WHERE id = ${id} AND dismissed_at IS NULL RETURNING id`
          case "restore":
            return sql`UPDATE notices SET dismissed_at = NULL,
                state = CASE WHEN read_at IS NULL THEN 'unread' ELSE 'read' END
              WHERE id = ${id} AND dismissed_at IS NOT NULL RETURNING id`
          case "snooze":
            return sql`UPDATE notices SET snoozed_until = ${until ?? at}
              WHERE id = ${id} AND dismissed_at IS NULL AND (snoozed_until IS NULL OR snoozed_until <= ${at}) RETURNING id`
          case "unsnooze":
            return sql`UPDATE notices SET snoozed_until = NULL
              WHERE id = ${id} AND dismissed_at IS NULL AND snoozed_until > ${at} RETURNING id`
        }
      })()
      return (yield* statement).length > 0
    }).pipe(Effect.orDie)

  const suppress = (source: string, on: boolean): Effect.Effect<boolean> =>
    Effect.flatMap(now, (at) =>
      on
        ? sql`INSERT INTO notice_suppressions ${sql.insert({ source, suppressedAt: at })}
            ON CONFLICT (source) DO NOTHING RETURNING source`
        : sql`DELETE FROM notice_suppressions WHERE source = ${source} RETURNING source`).pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  /** Claims the notice's update; false while another claim younger than `staleBefore` holds it. */
  const claim = (id: string, staleBefore: string): Effect.Effect<boolean> =>
    Effect.flatMap(now, (at) =>
      sql`UPDATE notices SET busy_since = ${at}
        WHERE id = ${id} AND (busy_since IS NULL OR busy_since < ${staleBefore}) RETURNING id`).pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const release = (id: string) => sql`UPDATE notices SET busy_since = NULL WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

  /** Newest first. */
  const skipped = sql`SELECT kind, name, version, skipped_at FROM skipped_versions
    ORDER BY skipped_at DESC, rowid DESC`.pipe(Effect.flatMap(decodeSkipped), Effect.orDie)

  const skip = (kind: string, name: string, version: string): Effect.Effect<boolean> =>
    Effect.flatMap(now, (at) =>
      sql`INSERT INTO skipped_versions ${sql.insert({ kind, name, version, skippedAt: at })}
        ON CONFLICT (kind, name, version) DO NOTHING RETURNING version`).pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const unskip = (kind: string, name: string, version: string): Effect.Effect<boolean> =>
    sql`DELETE FROM skipped_versions WHERE kind = ${kind} AND name = ${name} AND version = ${version}
      RETURNING version`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  return {
    page,
    get,
    insert,
    isSuppressed,
    change,
    suppress,
    claim,
    release,
    skipped,
    skip,
    unskip
  }
}

export type SqlNotices = ReturnType<typeof make>
