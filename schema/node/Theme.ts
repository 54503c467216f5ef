/**
 * Themes and appearance: the theme list, the appearance the app draws, the
 * `experience.*` preferences, and the appearance app intents.
 *
 * The `themes` group is outside the OpenAPI description and may change. POST
 * /app-intents is a route of the stable surface (`appIntents` group).
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { refusals } from "./Errors.js"
import { PreferenceWrite, preferenceState } from "./Preferences.js"
import { Authenticated } from "./Security.js"

// ---------------------------------------------------------------------------
// References and providers

export const builtinThemeRef = "builtin:app"

/** `builtin:app` or `package:<package_id>#<theme_id>`. */
export const themeRefPattern = /^(?:builtin:app|package:(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*#[A-Za-z0-9][A-Za-z0-9._-]*)$/

export const ThemeRef = Schema.String.pipe(
  Schema.maxLength(300),
  Schema.pattern(themeRefPattern, { message: () => "must be builtin:app or package:<package_id>#<theme_id>" })
).annotations({ identifier: "ThemeRef" })
export type ThemeRef = typeof ThemeRef.Type

export const ThemeProvider = Schema.Struct({
  packageId: Schema.String,
  version: Schema.String,
  digest: Schema.String,
  trustLane: Schema.String,
  source: Schema.Literal("registry", "local")
}).annotations({ identifier: "ThemeProvider" })

/** Codes of a theme that cannot be drawn (the /appearance fallback and the 409s of theme writes). */
export const ThemeFallback = Schema.Literal(
  "THEME_NOT_INSTALLED",
  "THEME_INVALID",
  "THEME_LOW_CONTRAST",
  "THEME_PROTECTED",
  "THEME_UNAVAILABLE",
  "THEME_UNKNOWN"
)
export type ThemeFallback = typeof ThemeFallback.Type

export const ColorScheme = Schema.Literal("light", "dark")

/** A failing contrast pair. */
export const ContrastFailure = Schema.Struct({
  scheme: ColorScheme,
  foreground: Schema.String,
  background: Schema.String,
  ratio: Schema.Number,
  minimum: Schema.Number
}).annotations({ identifier: "ContrastFailure" })

export const ProtectedCheckKind = Schema.Literal(
  "status-distinct",
  "status-vs-text",
  "focus-vs-border",
  "disabled-distinct",
  "edge-visible",
  "surface-readable",
  "orb-visible"
)

/** A failing protected-state requirement; `first` is `orb` for orb-visible. */
export const ProtectedFailure = Schema.Struct({
  scheme: ColorScheme,
  check: ProtectedCheckKind,
  first: Schema.String,
  second: Schema.String,
  value: Schema.Number,
  minimum: Schema.Number
}).annotations({ identifier: "ProtectedFailure" })

// ---------------------------------------------------------------------------
// Theme settings (appearance API 2)

export const appearanceApi = { min: 2, max: 2 } as const

export const BodyFont = Schema.Literal("clark", "system", "serif", "rounded", "mono", "inter", "geist")
export const MonoFont = Schema.Literal("clark", "typewriter", "jetbrains", "geist-mono")

const Between = (min: number, max: number) => Schema.Number.pipe(Schema.between(min, max))
const Unit = Between(0, 1)

export const ThemeSettings = Schema.Struct({
  typography: Schema.optional(
    Schema.Struct({
      body: Schema.optional(BodyFont),
      display: Schema.optional(BodyFont),
      mono: Schema.optional(MonoFont),
      headingWeight: Schema.optional(Between(400, 800))
    })
  ),
  border: Schema.optional(
    Schema.Struct({ width: Schema.optional(Between(1, 3)), style: Schema.optional(Schema.Literal("solid", "dashed")) })
  ),
  shadow: Schema.optional(
    Schema.Struct({
      style: Schema.optional(Schema.Literal("soft", "hard", "none")),
      offset: Schema.optional(Between(1, 8)),
      color: Schema.optional(Schema.Literal("text", "border", "accent"))
    })
  ),
  motion: Schema.optional(
    Schema.Struct({
      speed: Schema.optional(Between(0.5, 2)),
      easing: Schema.optional(Schema.Literal("standard", "snappy", "linear", "stepped"))
    })
  ),
  icons: Schema.optional(Schema.Struct({ stroke: Schema.optional(Between(1, 2.5)) })),
  radius: Schema.optional(Schema.Struct({ field: Schema.optional(Between(0, 2)) })),
  recipes: Schema.optional(
    Schema.Struct({
      button: Schema.optional(Schema.Literal("quiet", "outlined", "solid", "raised", "beveled")),
      card: Schema.optional(Schema.Literal("flat", "outlined", "raised")),
      input: Schema.optional(Schema.Literal("quiet", "filled", "outlined", "underlined")),
      modal: Schema.optional(Schema.Literal("floating", "framed")),
      badge: Schema.optional(Schema.Literal("pill", "rounded", "square")),
      composer: Schema.optional(Schema.Literal("floating", "integrated", "framed"))
    })
  ),
  effects: Schema.optional(
    Schema.Struct({
      backdrop: Schema.optional(
        Schema.Struct({
          kind: Schema.Literal("dot-grid", "hard-grid", "scanlines", "grain", "paper"),
          intensity: Schema.optional(Unit),
          scale: Schema.optional(Between(8, 48))
        })
      ),
      surface: Schema.optional(
        Schema.Struct({
          kind: Schema.Literal("glass", "soft-glow", "paper", "grain"),
          intensity: Schema.optional(Unit)
        })
      )
    })
  ),
  orb: Schema.optional(
    Schema.Struct({
      profile: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
      palette: Schema.optional(
        Schema.Record({
          key: Schema.String.pipe(Schema.filter((channel) => channel !== "canvas" || "canvas takes no palette colour")),
          value: Schema.Tuple(Unit, Unit, Unit)
        })
      )
    })
  )
}).annotations({ identifier: "ThemeSettings" })
export type ThemeSettings = typeof ThemeSettings.Type

export const HexColour = Schema.String.pipe(
  Schema.pattern(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, { message: () => "must be a hex colour such as #1a2b3c" })
).annotations({ identifier: "HexColour" })

/** The theme as the app draws it: colour tokens per scheme and its settings. */
export const ResolvedTheme = Schema.Struct({
  themeRef: ThemeRef,
  name: Schema.String,
  appearanceApi: Schema.Struct({ min: Schema.Int, max: Schema.Int }),
  colors: Schema.Struct({
    light: Schema.Record({ key: Schema.String, value: Schema.String }),
    dark: Schema.Record({ key: Schema.String, value: Schema.String })
  }),
  settings: ThemeSettings
}).annotations({ identifier: "ResolvedTheme" })

// ---------------------------------------------------------------------------
// Theme list and appearance

/** The default theme (provider null) first, then each package theme. */
export const ThemeEntry = Schema.Struct({
  themeRef: ThemeRef,
  name: Schema.String,
  provider: Schema.NullOr(ThemeProvider)
}).annotations({ identifier: "ThemeEntry" })

export const ThemeProblem = Schema.Struct({
  themeRef: Schema.String,
  code: ThemeFallback,
  reason: Schema.String,
  contrast: Schema.optional(Schema.Array(ContrastFailure)),
  protected: Schema.optional(Schema.Array(ProtectedFailure))
}).annotations({ identifier: "ThemeProblem" })

/** A package whose files could not be read. */
export const UncheckedPackage = Schema.Struct({ packageId: Schema.String, reason: Schema.String }).annotations({
  identifier: "UncheckedPackage"
})

export const ThemeList = Schema.Struct({
  themes: Schema.Array(ThemeEntry),
  problems: Schema.Array(ThemeProblem),
  unchecked: Schema.Array(UncheckedPackage)
}).annotations({ identifier: "ThemeList" })
export type ThemeList = typeof ThemeList.Type

/** `null` keeps the theme's colours; otherwise one colour per scheme. */
export const Accent = Schema.NullOr(Schema.Struct({ dark: HexColour, light: HexColour })).annotations({
  identifier: "Accent"
})
export const Density = Schema.Literal("comfortable", "compact")
/** `null` keeps the theme's face. */
export const Font = Schema.NullOr(BodyFont)
export const CodeFont = Schema.NullOr(MonoFont)

export const Customization = Schema.Struct({
  accent: Accent,
  density: Density,
  font: Font,
  codeFont: CodeFont
}).annotations({ identifier: "Customization" })

export const AppearanceParams = Schema.Struct({ themeRef: Schema.optional(ThemeRef) })

/**
 * What the app draws. `fallback` says why the default theme is drawn in place
 * of the chosen one (the choice is kept). `customizationFallback` says why a
 * saved accent is not applied (the preference is kept).
 */
export const Appearance = Schema.Struct({
  selectedRef: ThemeRef,
  appliedRef: ThemeRef,
  theme: ResolvedTheme,
  provider: Schema.NullOr(ThemeProvider),
  fallback: Schema.NullOr(ThemeFallback),
  customization: Customization,
  customizationFallback: Schema.NullOr(
    Schema.Struct({ code: Schema.String, reason: Schema.String, protected: Schema.optional(Schema.Array(ProtectedFailure)) })
  ),
  /** Up to six distinct references, most recent first; absent ones omitted. */
  recentThemes: Schema.Array(ThemeRef).pipe(Schema.maxItems(6))
}).annotations({ identifier: "Appearance" })
export type Appearance = typeof Appearance.Type

// ---------------------------------------------------------------------------
// experience.* preferences (values checked by the handler: 400 PREFERENCE_INVALID)

export const ThemeRefPreference = preferenceState("experience.themeRef", ThemeRef)
export const AccentPreference = preferenceState("experience.accent", Accent)
export const DensityPreference = preferenceState("experience.density", Density)
export const FontPreference = preferenceState("experience.font", Font)
export const CodeFontPreference = preferenceState("experience.codeFont", CodeFont)

export class ThemesGroup extends HttpApiGroup.make("themes")
  .add(HttpApiEndpoint.get("themes", "/themes").addSuccess(ThemeList).addError(refusals("NOT_IMPLEMENTED")))
  .add(
    HttpApiEndpoint.get("appearance", "/appearance")
      .setUrlParams(AppearanceParams)
      .addSuccess(Appearance)
      .addError(refusals("INVALID_INPUT", "NOT_IMPLEMENTED"))
  )
  .add(
    HttpApiEndpoint.put("setThemeRef", "/preferences/experience.themeRef")
      .setPayload(PreferenceWrite)
      .addSuccess(ThemeRefPreference)
      .addError(refusals(
        "INVALID_INPUT", "PREFERENCE_INVALID", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "THEME_NOT_INSTALLED",
        "THEME_INVALID", "THEME_UNAVAILABLE", "THEME_UNKNOWN", "NOT_IMPLEMENTED"
      ))
  )
  .add(
    HttpApiEndpoint.put("setAccent", "/preferences/experience.accent")
      .setPayload(PreferenceWrite)
      .addSuccess(AccentPreference)
      .addError(refusals(
        "INVALID_INPUT", "PREFERENCE_INVALID", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "NOT_IMPLEMENTED"
      ))
  )
  .add(
    HttpApiEndpoint.put("setDensity", "/preferences/experience.density")
      .setPayload(PreferenceWrite)
      .addSuccess(DensityPreference)
      .addError(refusals(
        "INVALID_INPUT", "PREFERENCE_INVALID", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "NOT_IMPLEMENTED"
      ))
  )
  .add(
    HttpApiEndpoint.put("setFont", "/preferences/experience.font")
      .setPayload(PreferenceWrite)
      .addSuccess(FontPreference)
      .addError(refusals(
        "INVALID_INPUT", "PREFERENCE_INVALID", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "NOT_IMPLEMENTED"
      ))
  )
  .add(
    HttpApiEndpoint.put("setCodeFont", "/preferences/experience.codeFont")
      .setPayload(PreferenceWrite)
      .addSuccess(CodeFontPreference)
      .addError(refusals(
        "INVALID_INPUT", "PREFERENCE_INVALID", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "NOT_IMPLEMENTED"
      ))
  )
  .middleware(Authenticated)
  .annotate(OpenApi.Exclude, true)
{}

// ---------------------------------------------------------------------------
// App intents (appearance); none asks for confirmation

export const AppearanceIntent = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("appearance.set-theme"), themeRef: ThemeRef }),
  Schema.Struct({ kind: Schema.Literal("appearance.set-color-scheme"), colorScheme: Schema.Literal("light", "dark", "system") }),
  Schema.Struct({ kind: Schema.Literal("appearance.reset") }),
  Schema.Struct({ kind: Schema.Literal("appearance.open-theme-gallery") })
).annotations({ identifier: "AppearanceIntent" })
export type AppearanceIntent = typeof AppearanceIntent.Type

/** The intent was carried out; clients re-read GET /appearance for the result. */
export const AppIntentDone = Schema.Struct({
  kind: Schema.String,
  outcome: Schema.Literal("done")
}).annotations({ identifier: "AppIntentDone" })

export class AppIntentsGroup extends HttpApiGroup.make("appIntents")
  .add(
    HttpApiEndpoint.post("perform", "/app-intents")
      .setPayload(AppearanceIntent)
      .addSuccess(AppIntentDone)
      .addError(refusals(
        "INVALID_INPUT", "THEME_LOW_CONTRAST", "THEME_PROTECTED", "THEME_NOT_INSTALLED", "THEME_INVALID",
        "THEME_UNAVAILABLE", "THEME_UNKNOWN", "NOT_IMPLEMENTED"
      ))
      .middleware(Authenticated)
  )
{}
