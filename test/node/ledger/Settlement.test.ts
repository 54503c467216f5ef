/** The spec's unknown-effect table: how the person's answer settles the task and the effect. */
import { describe, expect, it } from "@effect/vitest"
import { reconciledStatus, settledTaskStatus } from "../../../services/node/Ledger.js"

describe("settledTaskStatus", () => {
  it.each([
    // outcome, the run checked its result, task status, effect status
    ["confirmed", true, "succeeded", "confirmed"],
    ["confirmed", false, "settled-unchecked", "confirmed"],
    ["failed", true, "failed", "did-not-happen"],
    ["failed", false, "failed", "did-not-happen"]
  ] as const)("%s with checked %s → task %s, effect %s", (outcome, checked, taskStatus, effectStatus) => {
    expect(settledTaskStatus(outcome, checked)).toBe(taskStatus)
    expect(reconciledStatus(outcome)).toBe(effectStatus)
  })
})
