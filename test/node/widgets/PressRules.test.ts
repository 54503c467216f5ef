/** The pure press rules, one row per case: rule 10's shapes, rule 3's minute, rules 8 and 9's view-state answers. */
import { describe, expect, it } from "@effect/vitest"
import { admit, dayMillis, minuteMillis, notNewer, pastClockBound, shapeProblem } from "../../../services/node/PressRules.js"

describe("shapeProblem (rule 10)", () => {
  it.each([
    [{ invocationId: "i1" }, undefined],
    [{ invocationId: "i1", variant: "view-state", sequence: 1 }, undefined],
    [{ invocationId: "view-state:1" }, "reserved-invocation-id"],
    [{ invocationId: "view-state:1", variant: "view-state", sequence: 1 }, "reserved-invocation-id"],
    [{ invocationId: "View-State:1" }, undefined],
    [{ invocationId: "i1", sequence: 3 }, "sequence-without-variant"],
    [{ invocationId: "i1", variant: "view-state" }, "variant-without-sequence"],
    [{ invocationId: "i1", variant: "scroll", sequence: 1 }, "unknown-variant"],
    [{ invocationId: "i1", variant: "" }, "unknown-variant"]
  ] as const)("%j → %s", (press, problem) => {
    expect(shapeProblem(press)).toBe(problem)
  })
})

describe("admit (rule 3, a sliding minute per binding)", () => {
  it.each([
    ["an empty minute admits", [], 1000, 2, { admitted: true, window: [1000] }],
    ["below the limit admits", [1000], 2000, 2, { admitted: true, window: [1000, 2000] }],
    ["at the limit refuses until the oldest leaves", [1000, 2000], 3000, 2, {
      admitted: false,
      window: [1000, 2000],
      retryAfterMs: 1000 + minuteMillis - 3000
    }],
    ["a press a minute old no longer counts", [1000, 2000], 1000 + minuteMillis, 2, {
      admitted: true,
      window: [2000, 1000 + minuteMillis]
    }],
    ["one millisecond short of it still counts", [1000, 2000], 999 + minuteMillis, 2, {
      admitted: false,
      window: [1000, 2000],
      retryAfterMs: 1
    }]
  ] as const)("%s", (_, window, now, perMinute, expected) => {
    expect(admit(window, now, perMinute)).toEqual(expected)
  })
})

describe("view-state answers (rules 8 and 9)", () => {
  it.each([
    ["nothing held: written", undefined, { sequence: 1, invocationId: "a" }, undefined],
    ["newer: written", { sequence: 1, invocationId: "a" }, { sequence: 2, invocationId: "b" }, undefined],
    ["the latest write retried: duplicate", { sequence: 2, invocationId: "b" }, { sequence: 2, invocationId: "b" }, {
      duplicate: true,
      stale: false
    }],
    ["same sequence, another invocation: stale", { sequence: 2, invocationId: "b" }, { sequence: 2, invocationId: "c" }, {
      duplicate: true,
      stale: true
    }],
    ["older: stale", { sequence: 5, invocationId: "b" }, { sequence: 3, invocationId: "a" }, { duplicate: true, stale: true }]
  ] as const)("%s", (_, held, write, expected) => {
    expect(notNewer(held, write)).toEqual(expected)
  })

  it.each([
    [0, false],
    [dayMillis, false],
    [dayMillis + 1, true]
  ])("a state %i ms past the clock is out of bounds: %s", (ahead, out) => {
    const now = 1_800_000_000_000
    expect(pastClockBound({ positionMs: 0, playing: true, at: now + ahead }, now)).toBe(out)
  })
})
