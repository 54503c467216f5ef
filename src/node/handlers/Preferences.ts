/** Preferences without a group of their own: the execution modes for turns from other programs and for installs, and the deny rules. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { DenyRules, InstallMode, MachineTurns } from "../../../schema/node/Preferences.js"
import { decodePreference } from "../../../services/node/PreferenceErrors.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { wire } from "../http/Errors.js"

export const machineTurnsKey = "execution.machineTurns"
export const installModeKey = "execution.installs"
export const denyRulesKey = "execution.denyRules"

export const PreferencesLive = HttpApiBuilder.group(NodeApi, "preferences", (handlers) =>
  Effect.gen(function*() {
    const preferences = yield* PreferenceStore
    return handlers
      .handle("setMachineTurns", ({ payload }) =>
        Effect.gen(function*() {
          const value = yield* wire(decodePreference(machineTurnsKey, MachineTurns)(payload.value))
          const state = yield* preferences.set(machineTurnsKey, value)
          return { key: machineTurnsKey, value, updatedAt: state.updatedAt } as const
        }))
      .handle("setInstallMode", ({ payload }) =>
        Effect.gen(function*() {
          const value = yield* wire(decodePreference(installModeKey, InstallMode)(payload.value))
          const state = yield* preferences.set(installModeKey, value)
          return { key: installModeKey, value, updatedAt: state.updatedAt } as const
        }))
      .handle("setDenyRules", ({ payload }) =>
        Effect.gen(function*() {
          const value = yield* wire(decodePreference(denyRulesKey, DenyRules)(payload.value))
          const state = yield* preferences.set(denyRulesKey, value)
          return { key: denyRulesKey, value, updatedAt: state.updatedAt } as const
        }))
  }))
