/**
 * Typed requests the host resolves itself, without the model: a message that
 * is only "open settings" opens settings.
 */
export interface AppIntent {
  readonly kind: string
  readonly [key: string]: unknown
}

const intents: ReadonlyArray<readonly [RegExp, AppIntent]> = [
  [/^(?:please\s+)?(?:open|show|go to)\s+(?:the\s+|my\s+)?settings$/i, { kind: "open-settings" }],
  [/^\/settings$/i, { kind: "open-settings" }],
  [/^(?:please\s+)?(?:open|show)\s+(?:the\s+|my\s+)?inbox$/i, { kind: "open-inbox" }],
  [/^(?:please\s+)?(?:start|open)\s+voice(?:\s+mode)?$/i, { kind: "start-voice" }]
]

export const resolveAppIntent = (text: string): AppIntent | undefined => {
  const typed = text.trim().replace(/[.!]+$/, "")
  return intents.find(([pattern]) => pattern.test(typed))?.[1]
}

/** The appearance app intents (POST /app-intents), as the preference writes they make; none asks first. */
export type AppearanceIntentKind =
  | { readonly kind: "appearance.set-theme"; readonly themeRef: string }
  | { readonly kind: "appearance.set-color-scheme"; readonly colorScheme: "light" | "dark" | "system" }
  | { readonly kind: "appearance.reset" }
  | { readonly kind: "appearance.open-theme-gallery" }

/**
 * Reset restores the customization (accent, density, fonts) and keeps the selected theme and colour scheme
 * (spec, "Themes and appearance"); opening the gallery changes nothing the node stores.
 */
export const appearanceWrites = (intent: AppearanceIntentKind): ReadonlyArray<readonly [string, unknown]> => {
  switch (intent.kind) {
    case "appearance.set-theme":
      return [["experience.themeRef", intent.themeRef]]
    case "appearance.set-color-scheme":
      return [["experience.colorScheme", intent.colorScheme]]
    case "appearance.reset":
      return [
        ["experience.accent", null],
        ["experience.density", "comfortable"],
        ["experience.font", null],
        ["experience.codeFont", null]
      ]
    case "appearance.open-theme-gallery":
      return []
  }
}

/** `package:<package_id>#<theme_id>` split, or undefined for `builtin:app`. */
export const packageTheme = (themeRef: string): { readonly packageId: string; readonly themeId: string } | undefined => {
  const match = /^package:(.+)#([^#]+)$/.exec(themeRef)
  return match === null ? undefined : { packageId: match[1]!, themeId: match[2]! }
}
