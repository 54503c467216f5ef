/** Preferences without a group of their own: the execution modes for turns from other programs and for installs, and the deny rules. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { NodeApi } from "../../../schema/node/Api.js"
import { DenyRules, InstallMode, MachineTurns, ProjectFolders } from "../../../schema/node/Preferences.js"
import { projectFoldersKey } from "../../../services/node/Composer.js"
import { decodePreference, PreferenceInvalid } from "../../../services/node/PreferenceErrors.js"
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
      .handle("setProjectFolders", ({ payload }) =>
        Effect.gen(function*() {
          const value = yield* wire(decodePreference(projectFoldersKey, ProjectFolders)(payload.value))
          for (const [i, folder] of value.entries()) {
            const problem = path.normalize(folder) !== folder || (folder.length > 1 && folder.endsWith("/"))
              ? "must be a normalised path (no `.`, `..`, doubled or trailing slashes)"
              : !(yield* Effect.promise(() => fs.stat(folder).then((s) => s.isDirectory(), () => false)))
              ? "must be a folder on this computer"
              : undefined
            if (problem !== undefined) {
              return yield* wire(Effect.fail(new PreferenceInvalid({ key: projectFoldersKey, problem: `${i}: ${problem}` })))
            }
          }
          const unique = [...new Set(value)]
          const state = yield* preferences.set(projectFoldersKey, unique)
          return { key: projectFoldersKey, value: unique, updatedAt: state.updatedAt } as const
        }))
  }))
