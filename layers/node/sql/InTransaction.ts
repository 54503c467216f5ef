/**
 * Statements of a unit of work run on its transaction's connection. Inside a transaction, @effect/sql's statement
 * still makes a span (a no-op one with tracing off), a scope, a change of the fiber's context for that scope and a
 * lookup of the connection for every statement: about 70 steps of the fiber, where running the compiled statement
 * on the connection takes a dozen. A turn's start runs three statements and its checkpoints more, so these are
 * run here on `TransactionConnection` directly, compiled by the same client with the same names (Names.ts). With
 * tracing on, or outside a transaction, a statement runs as @effect/sql runs it, with its span.
 */
import { type SqlError, SqlClient, type Statement } from "@effect/sql"
import { Context, Effect, FiberRef } from "effect"
import { transformRows } from "./Names.js"

export const execute = <A extends object>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    const transaction = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
    if (transaction._tag === "None" || fiber.getFiberRef(FiberRef.currentTracerEnabled)) return statement
    const [sql, params] = statement.compile()
    return transaction.value[0].execute(sql, params, transformRows) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  })
