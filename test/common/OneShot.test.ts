/** The outcome set once that stands in for a Deferred on the hot paths (services/common/OneShot.ts). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { OneShot } from "../../services/common/OneShot.js"

describe("OneShot", () => {
  it.effect("every waiter, before and after, gets the first outcome; later ones are ignored", () =>
    Effect.gen(function*() {
      const cell = new OneShot<number, string>()
      const early = yield* Effect.fork(Effect.all([cell.wait(), cell.wait()]))
      yield* Effect.yieldNow()
      expect(cell.isDone).toBe(false)
      cell.done(Exit.succeed(1))
      cell.done(Exit.succeed(2))
      cell.done(Exit.fail("late"))
      expect(cell.isDone).toBe(true)
      expect(yield* Fiber.join(early)).toEqual([1, 1])
      expect(yield* cell.wait()).toBe(1)
    }))

  it.effect("a failure reaches every waiter as the same typed failure", () =>
    Effect.gen(function*() {
      const cell = new OneShot<number, string>()
      const waiter = yield* Effect.fork(Effect.either(cell.wait()))
      yield* Effect.yieldNow()
      cell.done(Exit.fail("refused"))
      expect(yield* Fiber.join(waiter)).toMatchObject({ _tag: "Left", left: "refused" })
      expect(yield* Effect.either(cell.wait())).toMatchObject({ _tag: "Left", left: "refused" })
    }))

  it.effect("an interrupted waiter stops waiting and leaves the others waiting", () =>
    Effect.gen(function*() {
      const cell = new OneShot<string, never>()
      const leaving = yield* Effect.fork(cell.wait())
      const staying = yield* Effect.fork(cell.wait())
      yield* Effect.yieldNow()
      const left = yield* Fiber.interrupt(leaving)
      expect(Exit.isInterrupted(left)).toBe(true)
      cell.done(Exit.succeed("ok"))
      expect(yield* Fiber.join(staying)).toBe("ok")
    }))
})
