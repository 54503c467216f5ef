/**
 * Transactions on the node's SQLite database, with group commit: every store on it shares the one connection, so
 * units of work that arrive while one is running wait anyway; instead of a transaction each, they join one group,
 * which runs them one after another, each after the first in its own savepoint, and commits once. A burst of 100
 * turn starts then costs a few commits instead of 100 (each COMMIT appends its pages to the WAL; the first write of
 * a transaction takes the write lock), and no member is answered before the COMMIT that stored it
 * (docs/decisions.md, "Group commit of turn starts").
 */
import { type SqlConnection, SqlClient, SqlError } from "@effect/sql"
import { Context, Effect, Exit, FiberRef, FiberSet, Layer, Scheduler } from "effect"
import { OneShot } from "../../../services/common/OneShot.js"
import { Transactions } from "../../../services/node/Transactions.js"

/** One unit of work waiting for its group: the effect and its caller's services, and where its outcome goes. */
interface Member {
  readonly run: Effect.Effect<unknown, unknown, never>
  readonly context: Context.Context<never>
  /** Not a Deferred: one is made per unit (services/common/OneShot.ts says why). */
  readonly outcome: OneShot<unknown, unknown>
}

/** The group that is still taking members, if any: it closes just before its COMMIT. */
interface Group {
  readonly members: Array<Member>
  open: boolean
}

/**
 * The most units one group takes. Without a bound a group that keeps finding newcomers would never reach its
 * COMMIT, and none of its members would be answered while work kept arriving.
 */
export const maxGroup = 128

/** A failed BEGIN, COMMIT or savepoint is the database failing, like the stores' own statements: a defect. */
const orDieSql = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  Effect.catchAll(effect, (error) =>
    error instanceof SqlError.SqlError ? Effect.die(error) : Effect.fail(error as Exclude<E, SqlError.SqlError>))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /**
   * Groups run on fibers of their own, forked from the layer's runtime: on the default scheduler whoever opened
   * them (a group that a turn's checkpoint opened also carries the starts that join it, which must not wait behind
   * turns' later steps, turns/Pacing.ts), and interrupted when the layer closes. Forked without a `forkIn` and a
   * `withScheduler` on the caller's fiber: in a burst nearly every group is one start.
   */
  const groups = yield* FiberSet.make<void>()
  const runGroupFiber = yield* FiberSet.runtime(groups)<never>()
  /** Set as the layer closes, before its groups are interrupted: the set would run nothing more. */
  let closed = false
  yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
  let current: Group | undefined
  /**
   * With tracing on (CLARK_TRACING, the layer built as configured), a group is a `sql.transaction` span, as
   * `withTransaction` made; off, no span is made at all.
   */
  const tracing = yield* FiberRef.get(FiberRef.currentTracerEnabled)
  const traced = <A, E>(effect: Effect.Effect<A, E>) =>
    tracing ? Effect.withSpan(effect, "sql.transaction", { kind: "client", captureStackTrace: false }) : effect

  /**
   * `body` in one transaction on the connection, which it holds meanwhile, as `sql.withTransaction` does for a
   * transaction that is not nested, written out: withTransaction prepares BEGIN and COMMIT anew for every use
   * (SQLite parses them each time) and makes a span, a second scope and a FiberRef change per transaction, where a
   * group of a burst is nearly always one turn start. BEGIN, COMMIT, ROLLBACK and the members' savepoints go to the
   * connection as statements it prepared once (its cache). Uninterruptible but for `body`: a group the layer's
   * closing interrupts is rolled back, and the connection is released in every case.
   */
  const transaction = <A, E>(body: (connection: SqlConnection.Connection) => Effect.Effect<A, E>) =>
    Effect.uninterruptibleMask((restore): Effect.Effect<A, E | SqlError.SqlError> =>
      Effect.scoped(Effect.flatMap(sql.reserve, (connection) => {
        const run = (statement: string) => connection.execute(statement, [], undefined)
        return Effect.zipRight(
          run("BEGIN"),
          Effect.flatMap(Effect.exit(restore(body(connection))), (exit) =>
            Exit.isSuccess(exit)
              // A COMMIT that fails leaves SQLite's transaction open: undone, so the next group can begin.
              ? Effect.as(Effect.tapError(run("COMMIT"), () => Effect.ignore(run("ROLLBACK"))), exit.value)
              : Effect.zipRight(run("ROLLBACK"), exit))
        )
      }))
    )

  /**
   * A member with its caller's services and the group's connection, as `withTransaction` gives it
   * (`TransactionConnection`, level 0): a unit nested in it is a savepoint, and the stores' statements run on it.
   */
  const inGroup = (member: Member, connection: SqlConnection.Connection) =>
    // The caller's services in place of the group fiber's (`locally` on the context), not `Effect.provide`, which
    // merges the two: the caller's context holds everything the unit needs, and the merge copied both whole
    // (60-odd services each) for every unit, a visible share of what a widget press allocates.
    Effect.exit(Effect.locally(
      member.run,
      FiberRef.currentContext,
      Context.add(member.context, SqlClient.TransactionConnection, [connection, 0] as const)
    ))

  /**
   * A member in its own savepoint: its failure or defect undoes only its own writes, and the group goes on. Its
   * savepoint is released when it succeeds, so savepoints do not pile up over a group (SQLite keeps a sub-journal
   * per open savepoint).
   */
  const runMember = (member: Member, connection: SqlConnection.Connection) => {
    const run = (statement: string) => connection.execute(statement, [], undefined)
    return Effect.zipRight(
      run("SAVEPOINT clark_member"),
      Effect.flatMap(inGroup(member, connection), (exit) =>
        Effect.as(
          Exit.isFailure(exit)
            ? Effect.zipRight(run("ROLLBACK TO clark_member"), run("RELEASE clark_member"))
            : run("RELEASE clark_member"),
          exit
        ))
    )
  }

  /**
   * The first member needs no savepoint: nothing of the transaction comes before it, so its failure is undone by
   * rolling the whole transaction back and beginning the next one for the members after it (none of them has run
   * yet: members run one after another). A group of one, the usual case of a unit nothing overlaps (a widget
   * press), then pays BEGIN and COMMIT only, not also a savepoint and its release.
   */
  const runFirst = (member: Member, connection: SqlConnection.Connection) =>
    Effect.flatMap(inGroup(member, connection), (exit): Effect.Effect<Exit.Exit<unknown, unknown>, SqlError.SqlError> =>
      Exit.isFailure(exit)
        // As a pair: a stop between them would leave no transaction for the group's own end to close.
        ? Effect.as(
          Effect.uninterruptible(Effect.zipRight(connection.execute("ROLLBACK", [], undefined), connection.execute("BEGIN", [], undefined))),
          exit
        )
        : Effect.succeed(exit))

  /** The group's members in its transaction, their outcomes in `done`. */
  const runMembers = Effect.fnUntraced(function*(
    group: Group,
    connection: SqlConnection.Connection,
    done: Array<readonly [Member, Exit.Exit<unknown, unknown>]>
  ) {
    for (let next = 0; next < group.members.length; next++) {
      const member = group.members[next]!
      done.push([member, yield* (next === 0 ? runFirst(member, connection) : runMember(member, connection))])
    }
    // Closed before COMMIT: a unit that arrives now starts the next group, which waits for this one's connection.
    group.open = false
    if (current === group) current = undefined
  })

  const closeGroup = (group: Group, exit: Exit.Exit<void>) =>
    Effect.sync(() => {
      group.open = false
      if (current === group) current = undefined
      // A COMMIT that failed, or the node closing: nothing of this group is stored, and each member learns it.
      if (Exit.isFailure(exit)) for (const member of group.members) member.outcome.done(Exit.failCause(exit.cause))
    })

  /**
   * Runs a group on its own fiber: a submitter that leaves does not interrupt the others' work. Members that join
   * while it runs are taken in the same transaction; the outcomes go out after COMMIT.
   * Generators hoisted (Effect.fnUntraced) rather than made per group: docs/decisions.md, "Widget presses: a
   * generator function made per call".
   */
  const runGroup = Effect.fnUntraced(function*(group: Group) {
    const done: Array<readonly [Member, Exit.Exit<unknown, unknown>]> = []
    yield* traced(orDieSql(transaction((connection) => runMembers(group, connection, done))))
    for (const [member, exit] of done) member.outcome.done(exit)
  }, (effect, group) => Effect.onExit(effect, (exit) => closeGroup(group, exit)))

  const atomically: Transactions["Type"]["atomically"] = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.withFiberRuntime<A, E, R>((fiber) => {
      const context = fiber.currentContext as Context.Context<never>
      // Already inside a transaction (a unit nested in another): a savepoint of that one, as before.
      if (Context.getOption(context, SqlClient.TransactionConnection)._tag === "Some") return orDieSql(sql.withTransaction(effect))
      const outcome = new OneShot<unknown, unknown>()
      const member: Member = { run: effect as Effect.Effect<unknown, unknown, never>, context, outcome }
      if (current !== undefined && current.open && current.members.length < maxGroup) current.members.push(member)
      else {
        const group: Group = { members: [member], open: true }
        current = group
        // After the layer closed, the set runs nothing: the group is refused as an interrupted one would be.
        if (closed) {
          current = undefined
          outcome.done(Exit.interrupt(fiber.id()))
        } else runGroupFiber(runGroup(group), { scheduler: Scheduler.defaultScheduler })
      }
      // Waited for whole: a caller that leaves (a client gone) still holds its locks until its unit is committed
      // or undone, so nothing else of its conversation runs before it; the group ends in any case.
      return Effect.uninterruptible(outcome.wait()) as Effect.Effect<A, E>
    })

  return Transactions.of({ atomically })
})

export const layer = Layer.scoped(Transactions, make)
