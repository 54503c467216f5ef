/** The freshness rule of the directory's cached answers (services/node/ListingCache.ts), case by case. */
import { describe, expect, it } from "@effect/vitest"
import { defaultFreshness, type EntryTimes, planRead, type ReadPlan } from "../../../services/node/ListingCache.js"

// Defaults: refreshed after 10 s, unused after 30 s, a first wait of 2 s from the request's start.
const now = 100_000
const s = (seconds: number) => now - seconds * 1000

const cases: ReadonlyArray<[string, EntryTimes | undefined, ReadPlan]> = [
  ["never asked: ask, and wait the first wait", undefined, { use: false, start: true, waitMillis: 2000 }],
  ["asked 0.5 s ago, no answer yet: wait out the rest", { answeredAt: null, requestStartedAt: s(0.5) }, { use: false, start: false, waitMillis: 1500 }],
  ["asked 3 s ago, no answer yet: no wait, no second request", { answeredAt: null, requestStartedAt: s(3) }, { use: false, start: false, waitMillis: 0 }],
  ["answered 5 s ago: use it", { answeredAt: s(5), requestStartedAt: null }, { use: true, start: false, waitMillis: 0 }],
  ["answered 10 s ago: use it and refresh", { answeredAt: s(10), requestStartedAt: null }, { use: true, start: true, waitMillis: 0 }],
  ["answered 20 s ago, refresh in flight: use it", { answeredAt: s(20), requestStartedAt: s(5) }, { use: true, start: false, waitMillis: 0 }],
  ["answered 30 s ago: not used; ask and wait", { answeredAt: s(30), requestStartedAt: null }, { use: false, start: true, waitMillis: 2000 }],
  ["answered 31 s ago, refresh started 1 s ago: wait out the rest", { answeredAt: s(31), requestStartedAt: s(1) }, { use: false, start: false, waitMillis: 1000 }],
  ["answered 40 s ago, refresh hanging for 20 s: not used, no wait", { answeredAt: s(40), requestStartedAt: s(20) }, { use: false, start: false, waitMillis: 0 }]
]

describe("planRead", () => {
  it.each(cases)("%s", (_, entry, plan) => {
    expect(planRead(entry, now, defaultFreshness)).toEqual(plan)
  })
})
