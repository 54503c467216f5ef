/** The page builder's pure rules: reading If-Match, and what a draft may not hold beyond its schema. */
import { describe, expect, it } from "@effect/vitest"
import { documentIssues, maxBlockDepth, maxBlocks } from "../../services/marketplace/PageEditor.js"
import { etag, matches, parseIfMatch } from "../../services/marketplace/Preconditions.js"

describe("If-Match", () => {
  it.each([
    [undefined, { _tag: "Missing" }],
    ["", { _tag: "Missing" }],
    ["   ", { _tag: "Missing" }],
    [`"3"`, { _tag: "Versions", versions: [3] }],
    [` "3" , "12"`, { _tag: "Versions", versions: [3, 12] }],
    [`W/"3"`, { _tag: "Versions", versions: [] }],
    ["*", { _tag: "Versions", versions: [] }],
    ["3", { _tag: "Versions", versions: [] }],
    [`"03"`, { _tag: "Versions", versions: [] }],
    [`"0"`, { _tag: "Versions", versions: [] }],
    [`"1e3"`, { _tag: "Versions", versions: [] }],
    [`"${"9".repeat(16)}"`, { _tag: "Versions", versions: [] }],
    [`"3", W/"4"`, { _tag: "Versions", versions: [3] }]
  ] as const)("reads %j", (header, expected) => {
    expect(parseIfMatch(header)).toEqual(expected)
  })

  it.each([
    [`"3"`, 3, true],
    [`"2", "3"`, 3, true],
    [`"2"`, 3, false],
    [`W/"3"`, 3, false],
    ["*", 3, false],
    [undefined, 3, false]
  ] as const)("%j matches version %i: %s", (header, version, expected) => {
    expect(matches(parseIfMatch(header), version)).toBe(expected)
  })

  it("tags a version as a strong entity tag that reads back", () => {
    expect(etag(7)).toBe(`"7"`)
    expect(parseIfMatch(etag(7))).toEqual({ _tag: "Versions", versions: [7] })
  })
})

type Blocks = Parameters<typeof documentIssues>[0]["blocks"]
const block = (id: string, children?: Blocks): Blocks[number] => ({ id, ...(children === undefined ? {} : { children }) })

/** `depth` blocks each nested in the one before. */
const chain = (depth: number): Blocks => {
  let blocks: Blocks = [block(`b${depth}`)]
  for (let level = depth - 1; level >= 1; level--) blocks = [block(`b${level}`, blocks)]
  return blocks
}

describe("documentIssues", () => {
  it.each([
    ["no blocks", [], []],
    ["distinct ids at every level", [block("a", [block("b"), block("c", [block("d")])]), block("e")], []],
    ["empty children", [block("a", [])], []],
    [
      "an id repeated among siblings",
      [block("a"), block("a")],
      [{ path: "document.blocks.1.id", message: `the block id "a" is used already at document.blocks.0` }]
    ],
    [
      "an id repeated in a child",
      [block("a", [block("b", [block("a")])])],
      [{ path: "document.blocks.0.children.0.children.0.id", message: `the block id "a" is used already at document.blocks.0` }]
    ],
    ["nesting as deep as allowed", chain(maxBlockDepth), []],
    [
      "nesting one level too deep",
      chain(maxBlockDepth + 1),
      [{
        path: `document.blocks${".0.children".repeat(maxBlockDepth - 1)}.0.children`,
        message: `blocks nest at most ${maxBlockDepth} levels deep`
      }]
    ]
  ] as const)("%s", (_, blocks, expected) => {
    expect(documentIssues({ blocks: blocks as Blocks })).toEqual(expected)
  })

  it("counts blocks across the tree and reports the first one over the limit", () => {
    const many = Array.from({ length: 10 }, (_, i) => block(`p${i}`, Array.from({ length: 99 }, (_, j) => block(`c${i}-${j}`))))
    expect(documentIssues({ blocks: many })).toEqual([])
    const over = [...many, block("last")]
    expect(documentIssues({ blocks: over })).toEqual([{ path: "document.blocks.10", message: `a document holds at most ${maxBlocks} blocks` }])
  })
})
