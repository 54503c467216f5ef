/**
 * What can keep a package from being read or installed, as the package
 * services see it. None of these knows an HTTP status: the node's one mapping
 * module (src/node/http/Errors.ts) turns each into its wire code.
 */
import { Schema } from "effect"

/**
 * The package's `package.json` or its `clark` manifest is not one the node can
 * run. `path` names the first problem (`clark.tools[0].risk`), `problem` says
 * what is wrong with it; neither holds a value from the file beyond its shape.
 */
export class ManifestInvalid extends Schema.TaggedError<ManifestInvalid>()("ManifestInvalid", {
  path: Schema.String,
  problem: Schema.String
}) {}

/** A `manifestVersion` this node does not read: refused before any other field is looked at. */
export class ManifestVersionUnsupported extends Schema.TaggedError<ManifestVersionUnsupported>()(
  "ManifestVersionUnsupported",
  { found: Schema.String, supported: Schema.Int }
) {}

export type ManifestError = ManifestInvalid | ManifestVersionUnsupported
