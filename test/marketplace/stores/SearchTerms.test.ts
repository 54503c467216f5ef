/** The search table's rows and prefix ranges (layers/marketplace/sql/SearchTerms.ts), as pure functions. */
import { describe, expect, it } from "@effect/vitest"
import {
  isStoredPrefix,
  prefixesOfPackage,
  prefixRange,
  termsOfPackage,
  tierOfScore,
  weightOf,
  wordsOf
} from "../../../layers/marketplace/sql/SearchTerms.js"
import { termsOf } from "../../../services/marketplace/Listing.js"
import fc from "fast-check"

describe("wordsOf", () => {
  // Query terms and stored words must be cut and folded alike, or a word would not find itself.
  it.each(["Café Finder", "@acme/widget-2", "ÆON naïve İstanbul", "x_y.z", "  ", "日本語 テキスト", "Ünïcödé—dash"])(
    "splits %j exactly like the query's termsOf",
    (text) => {
      expect(wordsOf(text)).toEqual(termsOf(text))
    }
  )

  it("cuts ASCII text (termsOf's shortcut) exactly as the Unicode passes do", () => {
    // Every code unit below 0x80, so separators, digits, capitals and controls all come up.
    const ascii = fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)), maxLength: 60 })
    fc.assert(fc.property(ascii, (text) => {
      expect(termsOf(text)).toEqual(wordsOf(text).slice(0, 16))
    }), { numRuns: 2000 })
  })

  it("keeps every word, where a query keeps 16", () => {
    const text = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ")
    expect(wordsOf(text)).toHaveLength(20)
  })
})

describe("termsOfPackage", () => {
  it.each([
    {
      label: "each word at the best field it appears in",
      pkg: { name: "@acme/weather-now", displayName: "Weather Now", keywords: ["forecast", "now"], description: "Forecast the weather, acme" },
      expected: [["acme", 1], ["weather", 1], ["now", 1], ["forecast", 3], ["the", 4]]
    },
    {
      label: "keywords joined as one text, accents folded",
      pkg: { name: "x", displayName: "Café", keywords: ["café au lait"], description: "" },
      expected: [["x", 1], ["cafe", 2], ["au", 3], ["lait", 3]]
    },
    { label: "an empty description adds nothing", pkg: { name: "a", displayName: "", keywords: [], description: "" }, expected: [["a", 1]] }
  ])("$label", ({ expected, pkg }) => {
    expect(termsOfPackage(pkg).map(({ term, tier }) => [term, tier])).toEqual(expected)
  })
})

describe("prefixesOfPackage", () => {
  it.each([
    {
      label: "one row per 3-letter start, at the best tier of the words starting so",
      terms: [["weather", 1], ["forecast", 3], ["weak", 4], ["fort", 2]] as const,
      expected: [["wea", 1], ["for", 2]]
    },
    { label: "words shorter than three letters have none", terms: [["ab", 1], ["abc", 4]] as const, expected: [["abc", 4]] },
    {
      label: "code points, not UTF-16 units",
      terms: [["𝒳𝒴𝒵w", 2], ["日本語", 3], ["日本", 1]] as const,
      expected: [["𝒳𝒴𝒵", 2], ["日本語", 3]]
    }
  ])("$label", ({ expected, terms }) => {
    expect(prefixesOfPackage(terms.map(([term, tier]) => ({ term, tier }))).map(({ prefix, tier }) => [prefix, tier]))
      .toEqual(expected)
  })

  it.each([["abc", true], ["ab", false], ["abcd", false], ["日本語", true], ["𝒳𝒴𝒵", true], ["𝒳𝒴", false]] as const)(
    "%j is answered from the prefix table: %s",
    (term, stored) => {
      expect(isStoredPrefix(term)).toBe(stored)
    }
  )
})

describe("scores", () => {
  it.each([[1, 8], [2, 4], [3, 2], [4, 1], [5, 0]])("tier %i weighs %i", (tier, weight) => {
    expect(weightOf(tier)).toBe(weight)
  })
  it.each([[8, 1], [4, 2], [2, 3], [1, 4], [0, 5], [6, 2], [100, 1]])("a score of %d resumes in tier %i", (score, tier) => {
    expect(tierOfScore(score)).toBe(tier)
  })
})

describe("prefixRange", () => {
  it.each([
    ["bio", { from: "bio", to: "bip" }],
    ["z", { from: "z", to: "{" }],
    ["caf9", { from: "caf9", to: "caf:" }],
    ["é", { from: "é", to: "ê" }],
    ["a\u{d7ff}", { from: "a\u{d7ff}", to: "a\u{e000}" }],
    ["x\u{1f600}", { from: "x\u{1f600}", to: "x\u{1f601}" }]
  ])("%j covers the words that start with it", (prefix, range) => {
    expect(prefixRange(prefix)).toEqual(range)
  })

  it("holds every longer word and no other, in byte order", () => {
    const { from, to } = prefixRange("bio")
    const inRange = (word: string) => Buffer.compare(Buffer.from(word), Buffer.from(from)) >= 0 && Buffer.compare(Buffer.from(word), Buffer.from(to)) < 0
    expect(["bio", "biology", "bio\u{10ffff}", "bioé"].every(inRange)).toBe(true)
    expect(["bin", "bip", "bi", "biz"].some(inRange)).toBe(false)
  })
})
