/**
 * A store's hot statements inside a transaction, on the node's `SqlClient`, without the client's per-statement span.
 *
 * `yield* statement` runs through `Effect.useSpan("sql.execute")` and a scope of its own: with tracing off
 * (CLARK_TRACING, the default) the span is a no-op one, yet making it, setting its attributes and ending it, with the
 * scope around the connection, cost about 14 µs of CPU per statement inside a transaction, where SQLite's own work
 * for a press's small statements is 2-5 µs (docs/decisions.md, "Widget presses: statements in the unit without
 * their span"). `run` compiles the statement as the client would and hands it to the connection the client would
 * use inside a transaction: the open one (`TransactionConnection`, looked up as the client does), with the client's
 * own name transform for the rows. Outside a transaction, with tracing on or a statement transformer set, it is the
 * plain statement (span, permit and transformer whole): outside, the reserved connection and its scope cost what
 * the span saves (50.4 against 49.0 µs per autocommit INSERT, measured).
 */
import { SqlClient, type SqlError, Statement } from "@effect/sql"
import { Context, Effect, FiberRef } from "effect"
import * as Names from "./Names.js"

/**
 * The node's client (NodeDatabase.ts) gives rows camelCase names for snake_case columns: the same transform, one
 * that remembers its answers (Names.ts).
 */
export { resultNames } from "./Names.js"
const transformRows = Statement.defaultTransforms(Names.resultNames).array

export type Run = <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>

export const run: Run = <A extends object>(statement: Statement.Statement<A>) =>
  Effect.withFiberRuntime<ReadonlyArray<A>, SqlError.SqlError>((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled) || fiber.getFiberRef(Statement.currentTransformer)._tag === "Some") {
      return statement
    }
    const open = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
    if (open._tag === "None") return statement
    const [text, params] = statement.compile()
    return open.value[0].execute(text, params, transformRows) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  })
