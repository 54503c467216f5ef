/** An appearance app intent naming a theme the node cannot draw: nothing stored. */
import { Schema } from "effect"
import { ThemeFallback } from "../../schema/node/Theme.js"

export class ThemeNotAvailable extends Schema.TaggedError<ThemeNotAvailable>()("ThemeNotAvailable", {
  themeRef: Schema.String,
  code: ThemeFallback,
  reason: Schema.String
}) {}
