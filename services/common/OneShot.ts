/**
 * An outcome set once and awaited by any number of fibers: what `Deferred` gives these callers, as a class.
 *
 * Why not `Deferred`: effect 3.22 makes each one as `{ ...CommitPrototype, [TypeId], state, commit() {…},
 * blockingOn }`, and on this V8 (Node 20) a spread followed by properties makes new hidden classes for every such
 * object, four per Deferred, with its `commit` closure held by one of them: runtime work on each make and
 * old-generation garbage that only a full collection frees. A widget press made three, on its hottest path
 * (docs/decisions.md, "Widget presses: hidden classes made per press"). A class keeps one hidden class.
 */
import { Effect, type Exit } from "effect"

export class OneShot<A, E> {
  private exit: Exit.Exit<A, E> | undefined = undefined
  private waiters: Array<(exit: Exit.Exit<A, E>) => void> | undefined = undefined

  /** Sets the outcome and wakes every waiter; only the first call counts. */
  done(exit: Exit.Exit<A, E>): void {
    if (this.exit !== undefined) return
    this.exit = exit
    const waiters = this.waiters
    this.waiters = undefined
    if (waiters !== undefined) for (const waiter of waiters) waiter(exit)
  }

  get isDone(): boolean {
    return this.exit !== undefined
  }

  /** The outcome, at once when set; a waiter that is interrupted stops waiting. */
  wait(): Effect.Effect<A, E> {
    return this.exit !== undefined ? this.exit : Effect.async<A, E>((resume) => {
      // Set meanwhile (between the check above and now, on another fiber's turn): answered at once.
      if (this.exit !== undefined) return resume(this.exit)
      const waiter = (exit: Exit.Exit<A, E>) => resume(exit)
      ;(this.waiters ??= []).push(waiter)
      return Effect.sync(() => {
        const index = this.waiters?.indexOf(waiter) ?? -1
        if (index !== -1) this.waiters!.splice(index, 1)
      })
    })
  }
}
