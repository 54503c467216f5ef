/**
 * The `clark` manifest a package carries in its `package.json` (DESIGN.md, "Local node: packages, widgets and
 * services"). Facets and permissions have the marketplace's shapes, so a listing and the manifest it came
 * from compare field by field; the rest says what the node may run: tools, widgets, themes and skills.
 *
 * This is the shape only. Rules across fields (a binding names a declared tool, ids are unique, a kind of
 * content has the facet that shows it) are `checkManifest` in services/node/Manifest.ts.
 */
import { Schema } from "effect"
import { Permission } from "../marketplace/Package.js"

/** Facet kinds and isolations a package can declare; the marketplace lists them as strings. */
export const FacetKind = Schema.Literal("tool", "widget", "theme", "skill", "service")
export const Isolation = Schema.Literal("declarative", "service", "isolated-ui", "trusted-native")

/**
 * A path inside the package folder: relative, `/`-separated, no `.` or `..` segment, no backslash or NUL.
 * Whether the file exists is checked against the folder at install.
 */
export const PackagePath = Schema.String.pipe(
  Schema.maxLength(1024),
  Schema.pattern(/^(?!\/)(?!.*\\)(?!.*\0)(?!(?:.*\/)?\.\.?(?:\/|$))[^/]+(?:\/[^/]+)*$/, {
    message: () => "must be a relative path inside the package (no leading /, no . or .. segments)"
  })
)

/** Ids of widgets, bindings, themes and skills: what `themeRef` and the bridge carry. */
export const LocalId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: () => "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)

/** Tool names as MCP allows them. */
export const ToolName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, { message: () => "must be 1-64 letters, digits, '_' or '-'" })
)

export const Facet = Schema.Struct({
  kind: FacetKind,
  isolation: Isolation,
  renderer: Schema.NullOr(Schema.String.pipe(Schema.maxLength(64))),
  entry: PackagePath,
  widgetId: Schema.NullOr(LocalId)
})
export type Facet = typeof Facet.Type

/** What a call of the tool can change; every class but `read` goes through the effect ledger first. */
export const RiskClass = Schema.Literal(
  "read",
  "local-write",
  "external-write",
  "destructive",
  "financial",
  "communication",
  "media-capture"
)
export type RiskClass = typeof RiskClass.Type

/** A tool's input: a JSON Schema of an object, given to the model as is and checked again on every call. */
export const ToolInputSchema = Schema.Struct(
  { type: Schema.Literal("object") },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

export const Tool = Schema.Struct({
  name: ToolName,
  description: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
  inputSchema: ToolInputSchema,
  risk: RiskClass,
  /** A call that runs as a background job (the spec's "Long-running package jobs"). */
  execution: Schema.optional(Schema.Struct({ kind: Schema.Literal("job"), version: Schema.Literal(1) }))
})
export type Tool = typeof Tool.Type

/** Presses of one binding a minute, at most; the node answers 429 RATE_LIMITED beyond it. */
export const PerMinute = Schema.Int.pipe(Schema.between(1, 600))

/**
 * What a widget's button does: call one of the package's tools, or ask the assistant (an agent binding,
 * whose press may carry `contextRefs`).
 */
export const ActionBinding = Schema.Union(
  Schema.Struct({ id: LocalId, kind: Schema.Literal("tool"), tool: ToolName, perMinute: PerMinute }),
  Schema.Struct({
    id: LocalId,
    kind: Schema.Literal("agent"),
    instruction: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
    perMinute: PerMinute
  })
)
export type ActionBinding = typeof ActionBinding.Type

export const Widget = Schema.Struct({
  id: LocalId,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /** The frame's HTML, served to the app from the package cache. */
  entry: PackagePath,
  appearanceMode: Schema.optionalWith(Schema.Literal("adaptive", "fixed"), { default: () => "adaptive" as const }),
  /** Actions the assistant may ask the widget to perform (actions.perform@1). */
  offeredActions: Schema.optionalWith(Schema.Array(LocalId).pipe(Schema.maxItems(32)), { default: () => [] }),
  bindings: Schema.optionalWith(Schema.Array(ActionBinding).pipe(Schema.maxItems(64)), { default: () => [] })
})
export type Widget = typeof Widget.Type

export const Theme = Schema.Struct({ id: LocalId, file: PackagePath })
export const Skill = Schema.Struct({
  id: LocalId,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  file: PackagePath
})

/** The manifest version this node reads; another is refused before its fields are looked at. */
export const manifestVersion = 1

export const Manifest = Schema.Struct({
  manifestVersion: Schema.Literal(manifestVersion),
  facets: Schema.Array(Facet).pipe(Schema.minItems(1), Schema.maxItems(32)),
  permissions: Schema.optionalWith(Schema.Array(Permission).pipe(Schema.maxItems(64)), { default: () => [] }),
  tools: Schema.optionalWith(Schema.Array(Tool).pipe(Schema.maxItems(64)), { default: () => [] }),
  widgets: Schema.optionalWith(Schema.Array(Widget).pipe(Schema.maxItems(32)), { default: () => [] }),
  themes: Schema.optionalWith(Schema.Array(Theme).pipe(Schema.maxItems(16)), { default: () => [] }),
  skills: Schema.optionalWith(Schema.Array(Skill).pipe(Schema.maxItems(64)), { default: () => [] })
})
export type Manifest = typeof Manifest.Type

/** npm's rules for a package name (lower case, at most 214 characters, maybe scoped). */
export const PackageName = Schema.String.pipe(
  Schema.maxLength(214),
  Schema.pattern(/^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/, { message: () => "must be a valid npm package name" })
)

/** Semantic version, as npm publishes it. */
export const PackageVersion = Schema.String.pipe(
  Schema.maxLength(100),
  Schema.pattern(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/, { message: () => "must be a semantic version" })
)

/** The parts of `package.json` the node reads. */
export const PackageJson = Schema.Struct({ name: PackageName, version: PackageVersion, clark: Manifest })
export type PackageJson = typeof PackageJson.Type
