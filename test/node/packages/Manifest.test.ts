/** The `clark` manifest: the example packages read, and each broken rule is refused with the path of its problem. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { formatPath, readPackageJson } from "../../../services/node/Manifest.js"

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../examples/packages")
const example = (name: string): any => JSON.parse(fs.readFileSync(path.join(examples, name, "package.json"), "utf8"))

/** A copy of the widget example changed by `edit`. */
const widgetWith = (edit: (pkg: any) => void) => {
  const pkg = structuredClone(example("tide-widget"))
  edit(pkg)
  return pkg
}

const refusal = <E>(read: Either.Either<unknown, E>) => (Either.isLeft(read) ? read.left : "read")

describe("the example packages", () => {
  it.each(["harbour-theme", "notes-service", "tide-widget"])("%s reads", (name) => {
    const read = readPackageJson(example(name))
    expect(Either.isRight(read) ? "ok" : read.left).toBe("ok")
  })

  it("defaults: appearanceMode adaptive, empty lists where nothing is declared", () => {
    const pkg = widgetWith((p) => delete p.clark.widgets[0].appearanceMode)
    const read = Either.getOrThrow(readPackageJson(pkg))
    expect(read.clark.widgets[0]!.appearanceMode).toBe("adaptive")
    expect(read.clark.themes).toEqual([])
    expect(read.clark.skills).toEqual([])
  })
})

describe("refusals name the first problem", () => {
  const cases: ReadonlyArray<readonly [string, (pkg: any) => void, string, RegExp]> = [
    ["no clark object", (p) => delete p.clark, "clark", /clark/],
    ["a bad package name", (p) => (p.name = "Tide Widget"), "name", /npm package name/],
    ["a version that is not semver", (p) => (p.version = "latest"), "version", /semantic version/],
    ["no facets", (p) => (p.clark.facets = []), "clark.facets", /at least 1/],
    ["an unknown risk class", (p) => (p.clark.tools[0].risk = "harmless"), "clark.tools[0].risk", /Expected/],
    ["an input schema that is not an object schema", (p) => (p.clark.tools[0].inputSchema = { type: "string" }),
      "clark.tools[0].inputSchema.type", /"object"/],
    ["a job of another version", (p) => (p.clark.tools[0].execution = { kind: "job", version: 2 }),
      "clark.tools[0].execution.version", /1/],
    ["an entry outside the package", (p) => (p.clark.widgets[0].entry = "../secrets.html"), "clark.widgets[0].entry",
      /relative path/],
    ["an absolute entry", (p) => (p.clark.facets[0].entry = "/etc/passwd"), "clark.facets[0].entry", /relative path/],
    ["an unknown appearance mode", (p) => (p.clark.widgets[0].appearanceMode = "loud"),
      "clark.widgets[0].appearanceMode", /Expected/],
    ["a per-minute limit of zero", (p) => (p.clark.widgets[0].bindings[0].perMinute = 0),
      "clark.widgets[0].bindings[0].perMinute", /between 1 and 600/],
    ["a permission of an unknown kind", (p) => p.clark.permissions.push({ kind: "telepathy", value: "x", access: null }),
      "clark.permissions[1].kind", /Expected/],
    ["a binding to a tool the package lacks", (p) => (p.clark.widgets[0].bindings[0].tool = "weather"),
      "clark.widgets[0].bindings[0].tool", /names no tool/],
    ["two tools of one name", (p) => p.clark.tools.push(p.clark.tools[0]), "clark.tools[2]", /repeats/],
    ["two bindings of one id", (p) => (p.clark.widgets[0].bindings[1].id = "refresh"), "clark.widgets[0].bindings[1].id",
      /repeats/],
    ["a widget facet naming no widget", (p) => (p.clark.facets[0].widgetId = "other"), "clark.facets[0].widgetId",
      /names no widget/],
    ["a widget without its facet", (p) => p.clark.widgets.push({ ...p.clark.widgets[0], id: "tide-map" }),
      "clark.widgets[1]", /no widget facet/],
    ["a declarative service", (p) => (p.clark.facets[1].isolation = "declarative"), "clark.facets[1].isolation",
      /runs code/],
    ["tools with nothing to run them", (p) => p.clark.facets.splice(1, 1), "clark.tools", /service/],
    ["a theme facet without themes", (p) =>
      p.clark.facets.push({ kind: "theme", isolation: "declarative", renderer: null, entry: "t.json", widgetId: null }),
      "clark.facets[2].kind", /theme/]
  ]

  it.each(cases)("%s", (_, edit, at, problem) => {
    expect(refusal(readPackageJson(widgetWith(edit)))).toMatchObject({
      _tag: "ManifestInvalid",
      path: at,
      problem: expect.stringMatching(problem)
    })
  })

  it.each([[2, "2"], ["1", "\"1\""], [undefined, "missing"]])("manifestVersion %j is refused before anything else", (version, found) => {
    const pkg = widgetWith((p) => {
      p.clark.manifestVersion = version
      p.clark.tools = "not even a list"
    })
    expect(refusal(readPackageJson(pkg))).toMatchObject({
      _tag: "ManifestVersionUnsupported",
      found,
      supported: 1
    })
  })

  it.each([
    [["clark", "tools", 0, "name"], "clark.tools[0].name"],
    [["clark", "themes", 2], "clark.themes[2]"],
    [["clark", "odd key"], "clark[\"odd key\"]"],
    [[], ""]
  ] as const)("formats %j as %s", (parts, text) => {
    expect(formatPath(parts)).toBe(text)
  })
})
