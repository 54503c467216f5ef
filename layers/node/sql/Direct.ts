/**
 * A store's hot statements on the node's `SqlClient` without the client's per-statement span.
 *
 * `yield* statement` runs through `Effect.useSpan("sql.execute")`: with tracing off (CLARK_TRACING, the default)
 * the span is a no-op one, yet making it, setting its attributes, ending it and the scope around it cost about
 * 25 µs of CPU per statement, several times SQLite's own work for the small statements of a widget press
 * (docs/decisions.md, "Widget presses: statements without their span"). `run` compiles the statement as the client
 * would and hands it to the same connection the client would use: the open transaction's (`TransactionConnection`,
 * as the client looks it up), else one reserved from the client for the statement (the client's permit, so it waits
 * while another fiber's transaction is open, as a plain statement does). Rows get the client's own name transform.
 * With tracing on, or a statement transformer set, it is the plain statement: spans and transformers stay whole.
 */
import { SqlClient, type SqlError, Statement } from "@effect/sql"
import { Context, Effect, FiberRef, String } from "effect"

/** The node's client (NodeDatabase.ts) gives rows camelCase names for snake_case columns: the same transform. */
export const resultNames = String.snakeToCamel
const transformRows = Statement.defaultTransforms(resultNames).array

export type Run = <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>

export const runner = (sql: SqlClient.SqlClient): Run => <A extends object>(statement: Statement.Statement<A>) =>
  Effect.withFiberRuntime<ReadonlyArray<A>, SqlError.SqlError>((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled) || fiber.getFiberRef(Statement.currentTransformer)._tag === "Some") {
      return statement
    }
    const [text, params] = statement.compile()
    const open = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
    return open._tag === "Some"
      ? open.value[0].execute(text, params, transformRows) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
      : Effect.scoped(
        Effect.flatMap(sql.reserve, (connection) => connection.execute(text, params, transformRows))
      ) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  })
