/**
 * Reading a package's `package.json`: its shape (schema/node/Manifest.ts), then the rules across its fields.
 * Pure: the folder, the tarball or the cache it came from is the caller's business. The first problem wins,
 * named by its path, so a publisher fixes one thing at a time in the order the file is read.
 */
import { Either, ParseResult, Schema } from "effect"
import { type Manifest, manifestVersion, PackageJson } from "../../schema/node/Manifest.js"
import { type ManifestError, ManifestInvalid, ManifestVersionUnsupported } from "./PackageErrors.js"

/** `clark.tools[0].inputSchema`: the path of a problem as a publisher would look it up in the file. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === "number") return `${out}[${key}]`
    const name = String(key)
    return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? (out === "" ? name : `${out}.${name}`) : `${out}[${JSON.stringify(name)}]`
  }, "")

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const decode = Schema.decodeUnknownEither(PackageJson, { errors: "first", onExcessProperty: "ignore" })

/** Decodes a parsed `package.json`; `Left` with the first problem. */
export const readPackageJson = (input: unknown): Either.Either<PackageJson, ManifestError> => {
  if (!isRecord(input)) return Either.left(new ManifestInvalid({ path: "", problem: "package.json must be an object" }))
  const clark = input.clark
  if (!isRecord(clark)) {
    return Either.left(new ManifestInvalid({ path: "clark", problem: "a Clark package carries a `clark` object" }))
  }
  if (clark.manifestVersion !== manifestVersion) {
    const found = clark.manifestVersion === undefined ? "missing" : JSON.stringify(clark.manifestVersion).slice(0, 40)
    return Either.left(new ManifestVersionUnsupported({ found, supported: manifestVersion }))
  }
  return decode(input).pipe(
    Either.mapLeft((error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return new ManifestInvalid({ path: formatPath(issue?.path ?? []), problem: issue?.message ?? "is not valid" })
    }),
    Either.flatMap((pkg) => {
      const problem = checkManifest(pkg.clark)
      return problem === undefined
        ? Either.right(pkg)
        : Either.left(new ManifestInvalid({ path: formatPath(["clark", ...problem.path]), problem: problem.problem }))
    })
  )
}

export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly problem: string
}

const firstDuplicate = (values: ReadonlyArray<string>): number => {
  const seen = new Set<string>()
  return values.findIndex((value) => (seen.has(value) ? true : (seen.add(value), false)))
}

/**
 * The rules across fields, in the file's order; the first broken one, or undefined. Ids are unique in
 * their list; a tool binding names a tool of the package; every widget, theme and skill is shown by a facet
 * of its kind, and every facet shows something declared; code runs only where a facet's isolation says so.
 */
export const checkManifest = (manifest: Manifest): Problem | undefined => {
  for (const [key, ids] of [
    ["tools", manifest.tools.map((tool) => tool.name)],
    ["widgets", manifest.widgets.map((widget) => widget.id)],
    ["themes", manifest.themes.map((theme) => theme.id)],
    ["skills", manifest.skills.map((skill) => skill.id)]
  ] as const) {
    const at = firstDuplicate(ids)
    if (at >= 0) return { path: [key, at], problem: `repeats the id "${ids[at]}"` }
  }

  const tools = new Set(manifest.tools.map((tool) => tool.name))
  for (const [w, widget] of manifest.widgets.entries()) {
    const binding = firstDuplicate(widget.bindings.map((b) => b.id))
    if (binding >= 0) return { path: ["widgets", w, "bindings", binding, "id"], problem: "repeats a binding id of this widget" }
    const offered = firstDuplicate(widget.offeredActions)
    if (offered >= 0) return { path: ["widgets", w, "offeredActions", offered], problem: "repeats an offered action" }
    for (const [b, bound] of widget.bindings.entries()) {
      if (bound.kind === "tool" && !tools.has(bound.tool)) {
        return { path: ["widgets", w, "bindings", b, "tool"], problem: `names no tool of this package ("${bound.tool}")` }
      }
    }
  }

  const widgets = new Set(manifest.widgets.map((widget) => widget.id))
  for (const [f, facet] of manifest.facets.entries()) {
    if (facet.kind === "widget") {
      if (facet.widgetId === null) return { path: ["facets", f, "widgetId"], problem: "a widget facet names its widget" }
      if (!widgets.has(facet.widgetId)) {
        return { path: ["facets", f, "widgetId"], problem: `names no widget of this package ("${facet.widgetId}")` }
      }
      if (facet.isolation !== "isolated-ui" && facet.isolation !== "trusted-native") {
        return { path: ["facets", f, "isolation"], problem: "a widget runs isolated-ui or trusted-native" }
      }
    } else if (facet.widgetId !== null) {
      return { path: ["facets", f, "widgetId"], problem: "only a widget facet names a widget" }
    }
    if ((facet.kind === "theme" || facet.kind === "skill") && facet.isolation !== "declarative") {
      return { path: ["facets", f, "isolation"], problem: `a ${facet.kind} is declarative: it runs no code` }
    }
    if ((facet.kind === "tool" || facet.kind === "service") && facet.isolation === "declarative") {
      return { path: ["facets", f, "isolation"], problem: `a ${facet.kind} runs code: service or trusted-native` }
    }
    if (facet.kind === "service" && facet.isolation !== "service") {
      return { path: ["facets", f, "isolation"], problem: "a service facet has isolation service" }
    }
    if (facet.kind === "tool" && manifest.tools.length === 0) {
      return { path: ["facets", f, "kind"], problem: "a tool facet needs at least one tool in `tools`" }
    }
    if (facet.kind === "theme" && manifest.themes.length === 0) {
      return { path: ["facets", f, "kind"], problem: "a theme facet needs at least one theme in `themes`" }
    }
    if (facet.kind === "skill" && manifest.skills.length === 0) {
      return { path: ["facets", f, "kind"], problem: "a skill facet needs at least one skill in `skills`" }
    }
  }

  const shown = (kind: string) => manifest.facets.some((facet) => facet.kind === kind)
  const runsCode = manifest.facets.some((facet) => facet.isolation === "service" || facet.isolation === "trusted-native")
  if (manifest.tools.length > 0 && !runsCode) {
    return { path: ["tools"], problem: "tools run in the package's service: add a facet with isolation service" }
  }
  for (const [w, widget] of manifest.widgets.entries()) {
    if (!manifest.facets.some((facet) => facet.kind === "widget" && facet.widgetId === widget.id)) {
      return { path: ["widgets", w], problem: `no widget facet shows the widget "${widget.id}"` }
    }
  }
  if (manifest.themes.length > 0 && !shown("theme")) return { path: ["themes"], problem: "no theme facet shows the themes" }
  if (manifest.skills.length > 0 && !shown("skill")) return { path: ["skills"], problem: "no skill facet shows the skills" }
  return undefined
}
