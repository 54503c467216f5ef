/** The body checks before and after parsing, on their own. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { nestedDeeperThan, parse, unfitCharacter } from "../../src/http/Bodies.js"

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

const holdsUnfit = (value: unknown): boolean =>
  typeof value === "string"
    ? unfitCharacter(value) !== undefined
    : typeof value === "object" && value !== null
    ? Object.entries(value).some(([key, item]) => unfitCharacter(key) !== undefined || holdsUnfit(item))
    : false

describe("parse: characters unfit to keep", () => {
  const reasonOf = (text: string) =>
    Effect.runSync(Effect.either(parse(Buffer.from(text), 64))).pipe(
      Either.match({ onLeft: (refusal) => `${refusal.reason} ${refusal.path ?? ""}`, onRight: () => "accepted" })
    )

  it("a NUL or a lone surrogate escaped anywhere, in a value or a key, is refused with where it is", () => {
    expect(reasonOf(`{"a":[1,{"b":"x\\u0000y"}]}`)).toBe("character a.1.b")
    expect(reasonOf(`{"a":{"k\\u0000":1}}`)).toBe("character a")
    expect(reasonOf(`["\\ud800"]`)).toBe("character 0")
    expect(reasonOf(`{"a":"\\uDC00 tail"}`)).toBe("character a")
  })

  it("the same bodies with other escapes, or none, are accepted as JSON.parse reads them", () => {
    expect(reasonOf(`{"a":[1,{"b":"x\\u0041y"}]}`)).toBe("accepted")
    expect(reasonOf(`{"a":"\\ud83d\\ude00","b":"é\\n"}`)).toBe("accepted")
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6, stringUnit: "binary" }), (value) => {
        const text = JSON.stringify(value)
        const parsed = Effect.runSync(Effect.either(parse(Buffer.from(text), 64)))
        // fast-check's strings hold a NUL or a lone surrogate now and then (JSON.stringify escapes both).
        if (holdsUnfit(value)) expect(Either.isLeft(parsed) && parsed.left.reason).toBe("character")
        else expect(Either.getOrThrow(parsed)).toEqual(JSON.parse(text))
      }),
      { numRuns: 300 }
    )
  })
})
