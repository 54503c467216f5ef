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
  const scope = yield* Effect.scope
  // Statements the client prepares once (its cache), unlike withTransaction's BEGIN/SAVEPOINT, prepared per use.
  const savepoint = sql`SAVEPOINT clark_member`
  const release = sql`RELEASE clark_member`
  const rollback = sql`ROLLBACK TO clark_member`
  const rollbackAll = sql`ROLLBACK`
  const begin = sql`BEGIN`
  let current: Group | undefined

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
   * Runs a group on its own fiber, in the layer's scope: a submitter that leaves does not interrupt the others'
   * work. Members that join while it runs are taken in the same transaction; the outcomes go out after COMMIT.
   */
  const runGroup = (group: Group) =>
    Effect.gen(function*() {
      const done: Array<readonly [Member, Exit.Exit<unknown, unknown>]> = []
      yield* orDieSql(sql.withTransaction(Effect.gen(function*() {
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
          // A COMMIT that failed, or the node closing: nothing of this group is stored, and each member learns it.
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
          const started = joined
            ? Effect.void
            // On the default scheduler, whoever opened it: a group that a turn's checkpoint opened also carries
            // the starts that join it, which must not wait behind turns' later steps (turns/Pacing.ts).
            : Effect.asVoid(Effect.forkIn(Effect.withScheduler(runGroup(current!), Scheduler.defaultScheduler), scope))
          // Waited for whole: a caller that leaves (a client gone) still holds its locks until its unit is
          // committed or undone, so nothing else of its conversation runs before it; the group ends in any case.
          return Effect.zipRight(started, Effect.uninterruptible(Deferred.await(outcome)) as Effect.Effect<A, E>)
        }))

  return Transactions.of({ atomically })
})

export const layer = Layer.scoped(Transactions, make)
