/**
 * WidgetInstances on the node's SQLite database; rows decoded with Schemas. Everything of an instance but its
 * revision and view state is written once, at placement: a row whose stored text is the same as the last one decoded
 * is not decoded again (its JSON columns parsed and its bindings walked on every press were most of a press's read).
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, type ParseResult, Schema } from "effect"
import { makeId } from "../../../services/common/Ids.js"
import {
  type ViewState,
  type WidgetBinding,
  type WidgetInstance,
  WidgetInstances,
  withDigests
} from "../../../services/node/WidgetInstances.js"
import * as Direct from "./Direct.js"
import { PressRow, toRecord } from "./SqlWidgetPressLog.js"

const Binding = Schema.Union(
  Schema.Struct({ id: Schema.String, kind: Schema.Literal("tool"), tool: Schema.String, perMinute: Schema.Int, digest: Schema.String }),
  Schema.Struct({
    id: Schema.String,
    kind: Schema.Literal("agent"),
    instruction: Schema.String,
    perMinute: Schema.Int,
    digest: Schema.String
  }),
  Schema.Struct({ id: Schema.String, kind: Schema.Literal("view-state"), perMinute: Schema.Int, digest: Schema.String })
)

const Row = Schema.Struct({
  id: Schema.String,
  conversationId: Schema.String,
  packageId: Schema.String,
  version: Schema.String,
  contentDigest: Schema.String,
  widgetId: Schema.String,
  props: Schema.parseJson(Schema.Unknown),
  revision: Schema.Int,
  bindings: Schema.parseJson(Schema.Array(Binding)),
  offeredActions: Schema.parseJson(Schema.Array(Schema.String)),
  taskId: Schema.NullOr(Schema.String),
  placedAt: Schema.String
})

const StateRow = Schema.Struct({
  viewSequence: Schema.NullOr(Schema.Int),
  viewInvocation: Schema.NullOr(Schema.String),
  viewState: Schema.NullOr(Schema.parseJson(Schema.Unknown)),
  stateRevision: Schema.Int
})

const decodeRow = Schema.decodeUnknown(Row)
const decodeStates = Schema.decodeUnknown(Schema.Array(StateRow))
const toInstance = ({ id, ...row }: typeof Row.Type): WidgetInstance => ({
  instanceId: id,
  ...row,
  bindings: row.bindings as ReadonlyArray<WidgetBinding>
})

const toViewState = (row: typeof StateRow.Type): Option.Option<ViewState> =>
  row.viewSequence === null || row.viewInvocation === null
    ? Option.none()
    : Option.some({
      sequence: row.viewSequence,
      invocationId: row.viewInvocation,
      stateRevision: row.stateRevision,
      state: row.viewState
    })

/** Instances decoded lately, by id, with the stored text they were decoded from; at most this many are kept. */
const decodedKept = 1024

/** The stored text of everything but the revision: equal text, equal instance. */
const storedText = (raw: Record<string, unknown>) =>
  [raw.conversationId, raw.packageId, raw.version, raw.contentDigest, raw.widgetId, raw.props, raw.bindings,
    raw.offeredActions, raw.taskId, raw.placedAt].join("\u0000")

const decodePress = Schema.decodeUnknown(PressRow)
// Built once: a schema made inside a method is built anew on every call (a press's revision move paid for it).
const decodeRevisions = Schema.decodeUnknown(Schema.Array(Schema.Struct({ revision: Schema.Int })))
const encodeState = Schema.encode(Schema.parseJson(Schema.Unknown))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const decoded = new Map<string, { readonly text: string; readonly instance: WidgetInstance }>()

  /** One row as an instance: decoded with the Row schema unless its stored text is the one decoded last time. */
  const instanceOf = (raw: Record<string, unknown>): Effect.Effect<WidgetInstance, ParseResult.ParseError> => {
    const text = storedText(raw)
    const held = typeof raw.id === "string" ? decoded.get(raw.id) : undefined
    if (held !== undefined && held.text === text && Number.isSafeInteger(raw.revision)) {
      return Effect.succeed({ ...held.instance, revision: raw.revision as number })
    }
    return Effect.map(decodeRow(raw), (row) => {
      const instance = toInstance(row)
      decoded.delete(instance.instanceId)
      if (decoded.size >= decodedKept) decoded.delete(decoded.keys().next().value!)
      decoded.set(instance.instanceId, { text, instance })
      return instance
    })
  }

  const rows = <E, R>(query: Effect.Effect<ReadonlyArray<Record<string, unknown>>, E, R>) =>
    query.pipe(Effect.flatMap((list) => Effect.forEach(list, instanceOf)), Effect.orDie)

  const columns = sql`i.id, i.conversation_id, i.package_id, i.version, i.content_digest, i.widget_id, i.props,
    i.revision, i.bindings, i.offered_actions, i.task_id, i.placed_at`

  const get = (conversationId: string, instanceId: string) =>
    Effect.map(
      rows(sql`SELECT ${columns} FROM widget_instances i WHERE i.id = ${instanceId}
        AND i.conversation_id = ${conversationId}`),
      (list) => Option.fromNullable(list[0])
    )

  /** The instance and the earlier press of this invocation id, if any, in one statement (a LEFT JOIN). */
  const forPress: WidgetInstances["Type"]["forPress"] = Effect.fnUntraced(function*(conversationId: string, instanceId: string, invocationId: string) {
      const [raw] = yield* sql<Record<string, unknown>>`SELECT ${columns}, p.status AS press_status,
        p.answer AS press_answer FROM widget_instances i LEFT JOIN widget_presses p
        ON p.instance_id = i.id AND p.invocation_id = ${invocationId}
        WHERE i.id = ${instanceId} AND i.conversation_id = ${conversationId}`
      if (raw === undefined) return Option.none()
      const { pressAnswer, pressStatus, ...row } = raw
      const instance = yield* instanceOf(row)
      const earlier = pressStatus === null || pressStatus === undefined
        ? Option.none()
        : Option.some(toRecord(yield* decodePress({ status: pressStatus, answer: pressAnswer })))
      return Option.some({ instance, earlier })
    }, (effect) => Effect.orDie(effect))

  const viewState = (conversationId: string, instanceId: string) =>
    sql`SELECT view_sequence, view_invocation, view_state, state_revision FROM widget_instances
      WHERE id = ${instanceId} AND conversation_id = ${conversationId}`.pipe(
      Effect.flatMap(decodeStates),
      Effect.map((list) => Option.flatMap(Option.fromNullable(list[0]), toViewState)),
      Effect.orDie
    )

  return WidgetInstances.of({
    get,
    forPress,
    place: (input) =>
      Effect.gen(function*() {
        const instance: WidgetInstance = {
          instanceId: yield* makeId("wgt"),
          conversationId: input.conversationId,
          packageId: input.packageId,
          version: input.version,
          contentDigest: input.contentDigest,
          widgetId: input.widgetId,
          props: input.props ?? null,
          revision: 1,
          bindings: withDigests(input.packageId, input.contentDigest, input.widgetId, input.bindings),
          offeredActions: input.offeredActions,
          taskId: input.taskId,
          placedAt: DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
        }
        const { instanceId, ...rest } = instance
        const row = yield* Schema.encode(Row)({ id: instanceId, ...rest })
        yield* sql`INSERT INTO widget_instances ${sql.insert(row)}`
        return instance
      }).pipe(Effect.orDie),
    list: (conversationId) =>
      rows(sql`SELECT ${columns} FROM widget_instances i WHERE i.conversation_id = ${conversationId}
        ORDER BY i.placed_at, i.id`),
    advance: (conversationId, instanceId) =>
      // In a press's closing unit: without the client's per-statement span (Direct.ts).
      Direct.run(sql`UPDATE widget_instances SET revision = revision + 1 WHERE id = ${instanceId}
        AND conversation_id = ${conversationId} RETURNING revision`).pipe(
        Effect.flatMap(decodeRevisions),
        Effect.map((list) => list[0]?.revision ?? 0),
        Effect.orDie
      ),
    viewState,
    writeViewState: (conversationId, instanceId, write) =>
      Effect.gen(function*() {
        const state = yield* encodeState(write.state ?? null)
        const changed = yield* sql`UPDATE widget_instances SET view_sequence = ${write.sequence},
          view_invocation = ${write.invocationId}, view_state = ${state}, state_revision = state_revision + 1
          WHERE id = ${instanceId} AND conversation_id = ${conversationId}
          AND (view_sequence IS NULL OR view_sequence < ${write.sequence}) RETURNING id`
        const current = yield* viewState(conversationId, instanceId)
        if (Option.isNone(current)) return yield* Effect.dieMessage("a view-state write on an instance that has none")
        return changed.length === 1
          ? { _tag: "Written" as const, current: current.value }
          : { _tag: "NotNewer" as const, current: current.value }
      }).pipe(Effect.orDie)
  })
})

export const layer = Layer.effect(WidgetInstances, make)
