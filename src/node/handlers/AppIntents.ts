/**
 * The `appIntents` group: the appearance intents, stored and validated (none asks for confirmation). The themes
 * work gives them their full effect (contrast and protected-state checks, GET /appearance).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { ThemeNotAvailable } from "../../../services/node/AppIntentErrors.js"
import { appearanceWrites, packageTheme } from "../../../services/node/AppIntents.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { wire } from "../http/Errors.js"

export const AppIntentsLive = HttpApiBuilder.group(NodeApi, "appIntents", (handlers) =>
  Effect.gen(function*() {
    const preferences = yield* PreferenceStore
    const packages = yield* PackageRecords
    const audit = yield* AuditLog

    /** A package theme must be one an installed package declares. */
    const checkTheme = (themeRef: string) =>
      Effect.gen(function*() {
        const named = packageTheme(themeRef)
        if (named === undefined) return
        const installed = yield* packages.installedOne(named.packageId)
        if (Option.isNone(installed)) {
          return yield* new ThemeNotAvailable({ themeRef, code: "THEME_NOT_INSTALLED", reason: "its package is not installed" })
        }
        if (!installed.value.manifest.themes.some((theme) => theme.id === named.themeId)) {
          return yield* new ThemeNotAvailable({ themeRef, code: "THEME_UNKNOWN", reason: "its package declares no such theme" })
        }
      })

    return handlers.handle("perform", ({ payload }) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        if (payload.kind === "appearance.set-theme") yield* checkTheme(payload.themeRef)
        const writes = appearanceWrites(payload)
        yield* Effect.forEach(writes, ([key, value]) => preferences.set(key, value), { discard: true })
        yield* audit.append({
          kind: "app-intent",
          surface: caller.surface,
          channel: caller.channel,
          detail: { intent: payload.kind, keys: writes.map(([key]) => key) }
        })
        return { kind: payload.kind, outcome: "done" } as const
      }).pipe(wire))
  }))
