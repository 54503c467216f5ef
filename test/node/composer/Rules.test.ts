/** The composer's pure rules: which relative paths may be joined to a project, ranking, the interleaving of rows. */
import { describe, expect, it } from "@effect/vitest"
import { interleave } from "../../../layers/node/Composer.js"
import { best, indexOf, search } from "../../../layers/node/composer/ProjectIndex.js"
import { inside, pathProblem, projectIdOf, rank } from "../../../services/node/Composer.js"

describe("pathProblem", () => {
  it.each([
    ["src/app.ts", undefined],
    ["README.md", undefined],
    ["a b/c-d_e.f", undefined],
    ["..hidden/ok", undefined],
    ["", "empty"],
    ["x".repeat(1025), "too-long"],
    ["a\0b", "nul"],
    ["src%2F..%2Fetc", "encoded"],
    ["%2e%2e/etc", "encoded"],
    ["src%5c..", "encoded"],
    ["a%00b", "encoded"],
    ["src\\..\\etc", "backslash"],
    ["/etc/passwd", "absolute"],
    ["C:/Windows", "absolute"],
    ["../etc/passwd", "dot-segment"],
    ["src/../../etc", "dot-segment"],
    ["./README.md", "dot-segment"],
    ["src//app.ts", "dot-segment"],
    ["src/", "dot-segment"]
  ])("%j → %s", (relative, problem) => {
    expect(pathProblem(relative)).toBe(problem)
  })
})

describe("inside", () => {
  it.each([
    ["/p", "/p", true],
    ["/p", "/p/a/b", true],
    ["/p", "/p2/a", false],
    ["/p", "/", false],
    ["/p/a", "/p", false]
  ])("%s holds %s: %s", (folder, target, expected) => {
    expect(inside(folder, target)).toBe(expected)
  })
})

describe("rank", () => {
  it.each([
    ["", "anything", "x/anything", 2],
    ["str", "strings.ts", "src/strings.ts", 0],
    ["ing", "strings.ts", "src/strings.ts", 1],
    ["src/s", "strings.ts", "src/strings.ts", 2],
    ["zz", "strings.ts", "src/strings.ts", -1],
    ["strings", "strings", "strings", 0]
  ])("%j in %s (%s) → %i", (query, name, fullPath, expected) => {
    expect(rank(query, name, fullPath)).toBe(expected)
  })

  it("project ids are stable, distinct and carry no path", () => {
    expect(projectIdOf("/home/a/project")).toBe(projectIdOf("/home/a/project"))
    expect(projectIdOf("/home/a/project")).not.toBe(projectIdOf("/home/a/project2"))
    expect(projectIdOf("/home/a/project")).toMatch(/^prj_[0-9a-f]{16}$/)
  })
})

describe("best and interleave", () => {
  const entry = (p: string) => ({
    path: p,
    lowerPath: p.toLowerCase(),
    lowerName: p.split("/").at(-1)!.toLowerCase(),
    folder: false
  })

  it("keeps the best matches: name prefix, then name, then path; shallower first", () => {
    const entries = ["deep/a/b/index.ts", "index.ts", "src/reindex.ts", "index/readme.md", "other.ts"].map(entry)
    expect(best(entries, "index", 3).map((e) => [e.entry.path, e.rank])).toEqual([
      ["index.ts", 0],
      ["deep/a/b/index.ts", 0],
      ["src/reindex.ts", 1]
    ])
    expect(best(entries, "", 2).map((e) => e.entry.path)).toEqual(["index.ts", "other.ts"])
  })

  it("the index's search answers what a scan of every entry answers", () => {
    const entries = Array.from({ length: 500 }, (_, i) => entry(`src/mod-${i % 7}/${["index", "util", "strings"][i % 3]}-${i}.ts`))
    const index = indexOf(entries, false, 0)
    for (const query of ["", "index", "mod-3/", "util-1", "s", ".ts", "zz", "src/mod-6/strings-48.ts", "a\nb"]) {
      expect(search(index, query, 8)).toEqual(query.includes("\n") ? [] : best(entries, query, 8))
    }
  })

  it("takes the best rank first, and among equals the kind offered least so far", () => {
    const row = (label: string) => ({ kind: "file" as const, label, disabledReason: "x" })
    const rows = interleave([
      [{ rank: 2, row: row("p1") }],
      [{ rank: 0, row: row("f1") }, { rank: 2, row: row("f2") }, { rank: 2, row: row("f3") }],
      [{ rank: 2, row: row("c1") }, { rank: 2, row: row("c2") }]
    ], 5)
    expect(rows.map((r) => r.label)).toEqual(["f1", "p1", "c1", "f2", "c2"])
    expect(interleave([[], []], 8)).toEqual([])
  })
})
