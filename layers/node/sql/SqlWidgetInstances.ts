/** WidgetInstances on the node's SQLite database; rows decoded with Schemas. */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Schema } from "effect"
import { makeId } from "../../../services/common/Ids.js"
import {
  type ViewState,
  type WidgetBinding,
  type WidgetInstance,
  WidgetInstances,
  withDigests
} from "../../../services/node/WidgetInstances.js"

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

const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
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

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    query.pipe(Effect.flatMap(decodeRows), Effect.map((list) => list.map(toInstance)), Effect.orDie)

  const get = (conversationId: string, instanceId: string) =>
    Effect.map(
      rows(sql`SELECT id, conversation_id, package_id, version, content_digest, widget_id, props, revision, bindings,
        offered_actions, task_id, placed_at FROM widget_instances WHERE id = ${instanceId}
        AND conversation_id = ${conversationId}`),
      (list) => Option.fromNullable(list[0])
    )

  const viewState = (conversationId: string, instanceId: string) =>
    sql`SELECT view_sequence, view_invocation, view_state, state_revision FROM widget_instances
      WHERE id = ${instanceId} AND conversation_id = ${conversationId}`.pipe(
      Effect.flatMap(decodeStates),
      Effect.map((list) => Option.flatMap(Option.fromNullable(list[0]), toViewState)),
      Effect.orDie
    )

  return WidgetInstances.of({
    get,
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
      rows(sql`SELECT id, conversation_id, package_id, version, content_digest, widget_id, props, revision, bindings,
        offered_actions, task_id, placed_at FROM widget_instances WHERE conversation_id = ${conversationId}
        ORDER BY placed_at, id`),
    advance: (conversationId, instanceId) =>
      sql`UPDATE widget_instances SET revision = revision + 1 WHERE id = ${instanceId}
        AND conversation_id = ${conversationId} RETURNING revision`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ revision: Schema.Int })))),
        Effect.map((list) => list[0]?.revision ?? 0),
        Effect.orDie
      ),
    viewState,
    writeViewState: (conversationId, instanceId, write) =>
      Effect.gen(function*() {
        const state = yield* Schema.encode(Schema.parseJson(Schema.Unknown))(write.state ?? null)
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
