/** WidgetPressLog on the node's SQLite database; rows decoded with Schemas. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import * as Direct from "./Direct.js"
import { type PressRecord, type SemanticDescription, WidgetPressLog } from "../../../services/node/WidgetPressLog.js"

const Answer = Schema.Union(
  Schema.Struct({ _tag: Schema.Literal("Success"), status: Schema.Literal(200, 202), body: Schema.Unknown }),
  Schema.Struct({ _tag: Schema.Literal("Refusal"), refusal: Schema.Unknown })
)
const AnswerJson = Schema.parseJson(Answer)

/** A press row's status and stored answer, as read (also by the instance store's read for a press). */
export const PressRow = Schema.Struct({
  status: Schema.Literal("running", "interrupted", "answered"),
  answer: Schema.NullOr(AnswerJson)
})

const SemanticRow = Schema.Struct({
  publishRevision: Schema.Int,
  summary: Schema.String,
  selectedIds: Schema.parseJson(Schema.Array(Schema.String)),
  values: Schema.NullOr(Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  publishedAt: Schema.String
})

const decodePresses = Schema.decodeUnknown(Schema.Array(PressRow))

export const toRecord = (row: typeof PressRow.Type): PressRecord =>
  row.status === "answered" && row.answer !== null ? { status: "answered", answer: row.answer } :
  row.status === "answered" ? { status: "interrupted" } :
  { status: row.status }

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const semanticRows = Schema.decodeUnknown(Schema.Array(SemanticRow))

  const described = (conversationId: string, instanceId: string) =>
    sql`SELECT publish_revision, summary, selected_ids, "values", published_at FROM widget_semantics
      WHERE instance_id = ${instanceId} AND conversation_id = ${conversationId}`.pipe(
      Effect.flatMap(semanticRows),
      Effect.map((rows): Option.Option<SemanticDescription> => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const get = (instanceId: string, invocationId: string) =>
    sql`SELECT status, answer FROM widget_presses WHERE instance_id = ${instanceId} AND invocation_id = ${invocationId}`.pipe(
      Effect.flatMap(decodePresses),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      Effect.orDie
    )

  return WidgetPressLog.of({
    claim: Effect.fnUntraced(function*(press: Parameters<WidgetPressLog["Type"]["claim"]>[0]) {
        // Listed, not `{ ...press, status, answer }`: a spread followed by properties makes a new hidden class per
        // object on this V8 (docs/decisions.md, "Widget presses: a generator function made per call").
        const row = {
          conversationId: press.conversationId,
          instanceId: press.instanceId,
          invocationId: press.invocationId,
          actionBindingId: press.actionBindingId,
          status: "running",
          answer: null
        }
        const inserted = yield* sql`INSERT INTO widget_presses ${sql.insert(row)}
          ON CONFLICT DO NOTHING RETURNING instance_id`
        return inserted.length === 1 ? Option.none() : yield* get(press.instanceId, press.invocationId)
      }, (effect) => Effect.orDie(effect)),
    get,
    // The answer is a typed value built by the press (or a refusal's encoded fields): written as JSON without
    // walking the Answer schema again; it is decoded with that schema when read.
    // In the press's closing unit: without the client's per-statement span (Direct.ts).
    answer: (instanceId, invocationId, answer) =>
      Direct.run(sql`UPDATE widget_presses SET status = 'answered', answer = ${JSON.stringify(answer)}
        WHERE instance_id = ${instanceId} AND invocation_id = ${invocationId} AND status = 'running'`).pipe(
        Effect.asVoid,
        Effect.orDie
      ),
    interruptRunning: sql`UPDATE widget_presses SET status = 'interrupted' WHERE status = 'running' RETURNING instance_id`.pipe(
      Effect.map((rows) => rows.length),
      Effect.orDie
    ),
    settling: (conversationId) =>
      sql`SELECT 1 AS one FROM widget_presses WHERE status = 'running' AND conversation_id = ${conversationId} LIMIT 1`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      ),
    publish: (conversationId, instanceId, description) =>
      Effect.gen(function*() {
        const row = yield* Schema.encode(SemanticRow)(description)
        const kept = yield* sql`INSERT INTO widget_semantics ${sql.insert({ instanceId, conversationId, ...row })}
          ON CONFLICT (instance_id) DO UPDATE SET publish_revision = excluded.publish_revision,
            summary = excluded.summary, selected_ids = excluded.selected_ids, "values" = excluded."values",
            published_at = excluded.published_at
          WHERE excluded.publish_revision > widget_semantics.publish_revision RETURNING instance_id`
        const held = yield* described(conversationId, instanceId)
        if (Option.isNone(held)) return yield* Effect.dieMessage("a published description is not held")
        return { accepted: kept.length === 1, held: held.value }
      }).pipe(Effect.orDie),
    described
  })
})

export const layer = Layer.effect(WidgetPressLog, make)
