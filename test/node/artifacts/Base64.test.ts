/**
 * The chunk payload's base64 check (schema/node/Artifact.ts `isBase64`) decodes instead of matching a pattern; it
 * must answer exactly what the pattern of standard base64 with padding answers, for any text.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"
import { Base64, isBase64, maxChunkBytes } from "../../../schema/node/Artifact.js"

/** The definition: groups of four alphabet characters, the last one padded with at most two `=`. */
const reference = (text: string) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)

/** Characters near the alphabet: the URL-safe ones, padding, whitespace, NUL, Latin-1 and above (low byte `A`). */
const character = fc.constantFrom(
  ..."ABCXYZabcxyz0189+/=-_ \n\t.\u0000\u00e9\u00c1\u0141\u0100\u3041\ud83d"
)

describe("isBase64", () => {
  it.each([
    ["", true],
    ["YQ==", true],
    ["YWI=", true],
    ["YWJj", true],
    ["YQ=", false],
    ["Y===", false],
    ["YQ==YQ==", false],
    ["=YWJ", false],
    ["YW=j", false],
    ["a-b_", false],
    ["ab c", false],
    ["YWJ\u00e9", false],
    ["\u0141UFB", false],
    ["QU\u0000B", false],
    ["****", false]
  ])("%j is base64: %s", (text, expected) => {
    expect(isBase64(text)).toBe(expected)
    expect(reference(text)).toBe(expected)
  })

  it("agrees with the pattern on any text near the alphabet, short and long", () => {
    fc.assert(
      fc.property(fc.array(character, { maxLength: 40 }).map((cs) => cs.join("")), (text) => {
        expect(isBase64(text)).toBe(reference(text))
      }),
      { numRuns: 5000 }
    )
    // Valid text of any length with one character changed somewhere.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 3000 }), fc.nat(), character, (bytes, at, c) => {
        const text = Buffer.from(bytes).toString("base64")
        const i = at % text.length
        const changed = text.slice(0, i) + c + text.slice(i + 1)
        expect(isBase64(text)).toBe(true)
        expect(isBase64(changed)).toBe(reference(changed))
      }),
      { numRuns: 2000 }
    )
  })

  it("the chunk schema takes a whole chunk and refuses one character past it", () => {
    const chunk = Buffer.alloc(maxChunkBytes, 0x5a).toString("base64")
    const decode = Schema.decodeUnknownEither(Base64(maxChunkBytes))
    expect(decode(chunk)._tag).toBe("Right")
    expect(decode(`${chunk}AAAA`)._tag).toBe("Left")
    expect(decode(`${chunk.slice(0, -4)}AA-A`)._tag).toBe("Left")
  })
})
