/** The service calls' deadlines: expired on the Clock, disarmed by the call's end, one sleeper for many. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Supervisor, TestClock } from "effect"
import * as Deadlines from "../../../layers/node/services/Deadlines.js"

describe("deadlines", () => {
  it.scoped("a deadline expires once its time has passed on the Clock, not before; a disarmed one never", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make(yield* Effect.scope)
      const expired: Array<string> = []
      yield* deadlines.arm(1_000, () => expired.push("a"))
      const disarmB = yield* deadlines.arm(1_500, () => expired.push("b"))
      yield* deadlines.arm(2_000, () => expired.push("c"))
      yield* TestClock.adjust(999)
      expect(expired).toEqual([])
      yield* TestClock.adjust(1)
      expect(expired).toEqual(["a"])
      yield* disarmB
      yield* TestClock.adjust(1_000)
      expect(expired).toEqual(["a", "c"])
      yield* TestClock.adjust(10_000)
      expect(expired).toEqual(["a", "c"])
    }))

  it.scoped("a deadline earlier than the one the sleeper waits for expires at its own time", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make(yield* Effect.scope)
      const expired: Array<string> = []
      yield* deadlines.arm(30_000, () => expired.push("long"))
      yield* deadlines.arm(2_000, () => expired.push("short"))
      yield* TestClock.adjust(2_000)
      expect(expired).toEqual(["short"])
      yield* TestClock.adjust(28_000)
      expect(expired).toEqual(["short", "long"])
    }))

  it.scoped("later deadlines fork nothing while a sleeper waits; after an idle spell the next one forks one", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make(yield* Effect.scope)
      const expired: Array<number> = []
      const supervisor = yield* Supervisor.track
      for (let i = 0; i < 5; i++) {
        const disarm = yield* Effect.supervised(deadlines.arm(30_000, () => expired.push(i)), supervisor)
        if (i < 4) yield* disarm
        yield* TestClock.adjust(10)
      }
      expect((yield* supervisor.value).length).toBe(1)
      yield* TestClock.adjust(30_000)
      expect(expired).toEqual([4])
      // Nothing armed: the sleeper has ended, and the next deadline starts another.
      yield* Effect.repeatN(Effect.yieldNow(), 5)
      const running = yield* Effect.filter(yield* supervisor.value, (fiber) => Effect.map(Fiber.poll(fiber), Option.isNone))
      expect(running.length).toBe(0)
      const next = yield* Supervisor.track
      yield* Effect.supervised(deadlines.arm(30_000, () => expired.push(5)), next)
      expect((yield* next.value).length).toBe(1)
      yield* TestClock.adjust(30_000)
      expect(expired).toEqual([4, 5])
    }))
})
