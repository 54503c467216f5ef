/**
 * Decoding issues as both services answer them: a value the client sent is
 * quoted back as a short prefix only, whatever its size, in the message and in
 * the path.
 */
import { HttpApiError } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { decodeIssues, maxQuoted, quote } from "../../src/http/Failures.js"

const issuesOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Schema.decodeUnknown(schema)(input).pipe(
    Effect.flip,
    Effect.flatMap(HttpApiError.HttpApiDecodeError.fromParseError),
    Effect.map(decodeIssues)
  )

describe("decodeIssues", () => {
  it.effect("a string over its maxLength is quoted as a prefix", () =>
    Effect.gen(function*() {
      const [issue] = yield* issuesOf(Schema.Struct({ text: Schema.String.pipe(Schema.maxLength(10)) }), {
        text: "x".repeat(1_000_000)
      })
      expect(issue!.path).toBe("text")
      expect(issue!.message).toContain("at most 10")
      expect(issue!.message.length).toBeLessThan(200)
      expect(issue!.message).toContain(`actual "${"x".repeat(maxQuoted - 1)}…`)
    }))

  it.effect("a wrong literal is quoted as a prefix, what was expected whole", () =>
    Effect.gen(function*() {
      const issues = yield* issuesOf(Schema.Struct({ source: Schema.Literal("chat", "voice", "api") }), {
        source: "y".repeat(10_000)
      })
      expect(issues.map((issue) => issue.message)).toEqual(
        ["chat", "voice", "api"].map((literal) => `Expected "${literal}", actual "${"y".repeat(maxQuoted - 1)}…`)
      )
    }))

  it.effect("a long key in the path is cut too", () =>
    Effect.gen(function*() {
      const key = "k".repeat(10_000)
      const [issue] = yield* issuesOf(Schema.Record({ key: Schema.String, value: Schema.Number }), { [key]: "no" })
      expect(issue!.path).toBe(quote(key))
      expect(issue!.path.length).toBe(maxQuoted + 1)
    }))

  it.effect("a value quoted elsewhere in a message is cut too", () =>
    Effect.gen(function*() {
      const [issue] = yield* issuesOf(Schema.Struct({ after: Schema.NumberFromString }), { after: "z".repeat(10_000) })
      expect(issue!.message).toBe(`Unable to decode "${"z".repeat(maxQuoted)}…" into a number`)
    }))

  it("short values are quoted whole", () => {
    expect(quote("short")).toBe("short")
  })
})
