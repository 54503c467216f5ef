/**
 * The turns' paced scheduler: later steps go in slices with the event loop's poll between them, except while every
 * turn is being stopped (emergency stop, shutdown), when the queue runs to its end in one go.
 */
import { describe, expect, it } from "@effect/vitest"
import { Scheduler } from "effect"
import * as Pacing from "../../layers/node/turns/Pacing.js"

const noFiber = undefined as unknown as Parameters<Scheduler.Scheduler["scheduleTask"]>[2]

/** Runs `count` tasks of a little over one slice each; returns, per task, how many event-loop turns had passed. */
const run = (count: number, drainFrom: number | undefined) =>
  new Promise<Array<number>>((resolve) => {
    let arrivals = 0
    let draining = false
    const scheduler = Pacing.makeSliced(1, () => arrivals, () => draining)
    // A start arrived: steps are queued, not run at once.
    arrivals = 1
    let loops = 0
    let finished = false
    const loop = () => {
      loops++
      if (!finished) setImmediate(loop)
    }
    setImmediate(loop)
    const seen: Array<number> = []
    for (let i = 0; i < count; i++) {
      scheduler.scheduleTask(() => {
        seen.push(loops)
        if (i === drainFrom) draining = true
        // Busy for a little over a slice (no timer): the next step would take the next slice.
        const until = performance.now() + 1.2
        while (performance.now() < until) { /* spin */ }
        if (seen.length === count) {
          finished = true
          resolve(seen)
        }
      }, 0, noFiber)
    }
  })

describe("Pacing", () => {
  it("spreads steps over turns of the event loop", async () => {
    const seen = await run(4, undefined)
    expect(new Set(seen).size).toBe(4)
  })

  it("runs every queued step at once while all turns are being stopped", async () => {
    const seen = await run(6, 1)
    // The first two steps each took a slice; once draining, the rest ran right after the step that began it.
    expect(seen[0]).toBeLessThan(seen[1]!)
    expect(seen.slice(2)).toEqual([seen[1], seen[1], seen[1], seen[1]])
  })
})
