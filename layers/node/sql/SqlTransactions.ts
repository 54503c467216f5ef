/**
 * Transactions on the node's SQLite database, with group commit: every store on it shares the one connection, so
 * units of work that arrive while one is running wait anyway; instead of a transaction each, they join one group,
 * which runs them one after another, each after the first in its own savepoint, and commits once. A burst of 100
 * turn starts then costs a few commits instead of 100 (each COMMIT appends its pages to the WAL; the first write of
 * a transaction takes the write lock), and no member is answered before the COMMIT that stored it
 * (docs/decisions.md, "Group commit of turn starts").
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Context, Deferred, Effect, Exit, Layer, Scheduler } from "effect"
import { Transactions } from "../../../services/node/Transactions.js"

/** One unit of work waiting for its group: the effect with its caller's context, and where its outcome goes. */
interface Member {
  readonly run: Effect.Effect<unknown, unknown>
  readonly outcome: Deferred.Deferred<unknown, unknown>
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
  // Statements the client prepares once (its cache), unlike withTransaction's BEGIN/SAVEPOINT, prepared per use.
  const savepoint = sql`SAVEPOINT clark_member`
  const release = sql`RELEASE clark_member`
  const rollback = sql`ROLLBACK TO clark_member`
  const rollbackAll = sql`ROLLBACK`
  const begin = sql`BEGIN`
  let current: Group | undefined

  /**
   * `body` in one transaction on the connection, which it holds meanwhile, as `sql.withTransaction` does for a
   * transaction that is not nested. Written out because a group is nearly always one turn start in a burst, and
   * there withTransaction's own cost counted: it prepares BEGIN and COMMIT anew for every use (SQLite parses them
   * each time), and makes a span and a second scope. Here BEGIN, COMMIT and ROLLBACK go to the connection as
   * statements it prepared once (its cache), with no span. Members see the connection as withTransaction gives it
   * (`TransactionConnection`, level 0), so a unit nested in a member is a savepoint as before.
   */
  const transaction = <A, E, R>(body: Effect.Effect<A, E, R>) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.scoped(Effect.flatMap(restore(sql.reserve), (connection) => {
        const run = (statement: string) => connection.executeRaw(statement, [])
        return Effect.zipRight(
          run("BEGIN"),
          Effect.flatMap(
            Effect.exit(restore(Effect.provideService(body, SqlClient.TransactionConnection, [connection, 0]))),
            (exit) =>
              Exit.isSuccess(exit)
                // A COMMIT that fails leaves SQLite's transaction open: undone, so the next group can begin.
                ? Effect.as(Effect.tapError(run("COMMIT"), () => Effect.ignore(run("ROLLBACK"))), exit.value)
                : Effect.zipRight(run("ROLLBACK"), exit)
          )
        )
      }))
    )

  /**
   * A member in its own savepoint: its failure or defect undoes only its own writes, and the group goes on. Its
   * savepoint is released when it succeeds, so savepoints do not pile up over a group (SQLite keeps a sub-journal
   * per open savepoint).
   */
  const runMember = (member: Member) =>
    Effect.gen(function*() {
      yield* savepoint
      const exit = yield* Effect.exit(member.run)
      if (Exit.isFailure(exit)) yield* rollback
      yield* release
      return exit
    })

  /**
   * The first member needs no savepoint: nothing of the transaction comes before it, so its failure is undone by
   * rolling the whole transaction back and beginning the next one for the members after it (none of them has run
   * yet: members run one after another). A group of one, the usual case of a unit nothing overlaps (a widget
   * press), then pays BEGIN and COMMIT only, not also a savepoint and its release.
   */
  const runFirst = (member: Member) =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(member.run)
      // As a pair: a stop between them would leave no transaction for withTransaction's own end to close.
      if (Exit.isFailure(exit)) yield* Effect.uninterruptible(Effect.zipRight(rollbackAll, begin))
      return exit
    })

  /**
   * Runs a group, on the fiber of the unit that opened it (see `atomically`). Members that join while it runs are
   * taken in the same transaction; the outcomes go out after COMMIT.
   */
  const runGroup = (group: Group) =>
    Effect.gen(function*() {
      const done: Array<readonly [Member, Exit.Exit<unknown, unknown>]> = []
      yield* orDieSql(transaction(Effect.gen(function*() {
        for (let next = 0; next < group.members.length; next++) {
          const member = group.members[next]!
          done.push([member, yield* (next === 0 ? runFirst(member) : runMember(member))])
        }
        // Closed before COMMIT: a unit that arrives now starts the next group, which waits for this one's connection.
        group.open = false
        if (current === group) current = undefined
      })))
      for (const [member, exit] of done) yield* Deferred.done(member.outcome, exit)
    }).pipe(
      Effect.onExit((exit) =>
        Effect.gen(function*() {
          group.open = false
          if (current === group) current = undefined
          // A COMMIT that failed: nothing of this group is stored, and each member learns it.
          if (Exit.isFailure(exit)) for (const member of group.members) yield* Deferred.failCause(member.outcome, exit.cause)
        })
      )
    )

  const atomically: Transactions["Type"]["atomically"] = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Effect.context<R>(), (context) =>
      // Already inside a transaction (a unit nested in another): a savepoint of that one, as before.
      Context.getOption(context as Context.Context<never>, SqlClient.TransactionConnection)._tag === "Some"
        ? orDieSql(sql.withTransaction(effect))
        : Effect.flatMap(Deferred.make<unknown, unknown>(), (outcome) => {
          const member: Member = {
            // The caller's own services, and from the group only its transaction's connection.
            run: Effect.mapInputContext(effect, (group: Context.Context<never>) =>
              Context.add(context, SqlClient.TransactionConnection, Context.unsafeGet(group, SqlClient.TransactionConnection))) as Effect.Effect<
                unknown,
                unknown
              >,
            outcome
          }
          const joined = current !== undefined && current.open && current.members.length < maxGroup
          if (joined) current!.members.push(member)
          else {
            const group: Group = { members: [member], open: true }
            current = group
          }
          // The unit that opens a group runs it, on its own fiber (a fiber of its own per group was most of a lone
          // start's cost here: a fork into the layer's scope, its scheduling and the opener's wake-up). Whole:
          // a caller that leaves (a client gone) neither stops the members that joined nor its own unit, and still
          // holds its locks until its unit is committed or undone, so nothing else of its conversation runs before
          // it. On the default scheduler, whoever opened it: a group that a turn's checkpoint opened also carries
          // the starts that join it, which must not wait behind turns' later steps (turns/Pacing.ts).
          const started = joined ? Effect.void : Effect.exit(Effect.withScheduler(runGroup(current!), Scheduler.defaultScheduler))
          return Effect.uninterruptible(Effect.zipRight(started, Deferred.await(outcome))) as Effect.Effect<A, E>
        }))

  return Transactions.of({ atomically })
})

export const layer = Layer.effect(Transactions, make)
