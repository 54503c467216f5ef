/** The body checks before and after parsing, on their own. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { nestedDeeperThan, parse } from "../../src/http/Bodies.js"

const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null
    ? 1 + Math.max(0, ...Object.values(value).map(depthOf))
    : 0

describe("nestedDeeperThan", () => {
  it("agrees with the parsed value's depth on any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, limit) => {
        expect(nestedDeeperThan(JSON.stringify(value), limit)).toBe(depthOf(value) > limit)
      }),
      { numRuns: 500 }
    )
  })

  it("brackets and escaped quotes inside strings do not count", () => {
    expect(nestedDeeperThan(JSON.stringify({ a: "[[[[{{{{", b: "\\\"[[[", c: "\\\\" }), 1)).toBe(false)
    expect(nestedDeeperThan(JSON.stringify(["\\", [["x\"]"]]]), 2)).toBe(true)
  })

  it("a megabyte of nesting is refused before the parser sees it", () =>
    Effect.gen(function*() {
      const deep = Buffer.from("[".repeat(500_000) + "]".repeat(500_000))
      const started = performance.now()
      const result = yield* Effect.either(parse(deep, 64))
      expect(Either.isLeft(result) && result.left.reason).toBe("too-deep")
      expect(performance.now() - started).toBeLessThan(200)
    }).pipe(Effect.runPromise))
})
