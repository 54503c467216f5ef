/**
 * Preference writes (`PUT /preferences/<key>` with `{value}`) and the
 * execution-mode preference for turns from other programs.
 *
 * A value that does not fit its preference is refused with 400
 * PREFERENCE_INVALID, nothing stored; so the route payloads carry the value
 * undecoded and the handler decodes it with the preference's own Schema
 * (services/node/PreferenceErrors.ts), never the generic request-decoding
 * failure.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { refusals } from "./Errors.js"
import { RiskClass } from "./Manifest.js"
import { Authenticated, PersonOnly, Surface } from "./Security.js"

/** Body of every preference write. The value is checked by the handler against the preference's Schema. */
export const PreferenceWrite = Schema.Struct({
  value: Schema.Unknown.annotations({ description: "The new value of the preference (its shape depends on the key)" })
}).annotations({ identifier: "PreferenceWrite" })
export type PreferenceWrite = typeof PreferenceWrite.Type

/** A preference as stored after a write: its key, value and when it changed. */
export const preferenceState = <const Key extends string, A, I>(key: Key, value: Schema.Schema<A, I>) =>
  Schema.Struct({ key: Schema.Literal(key), value, updatedAt: DateTimeString })

/**
 * `execution.machineTurns`: `ask` makes risky steps of turns from the mcp,
 * relay and cli-api origins ask first; `default` treats them like the person.
 */
export const MachineTurns = Schema.Literal("default", "ask").annotations({ identifier: "MachineTurns" })
export type MachineTurns = typeof MachineTurns.Type

export const MachineTurnsPreference = preferenceState("execution.machineTurns", MachineTurns).annotations({
  identifier: "MachineTurnsPreference"
})

/**
 * `execution.installs` (not in the spec; docs/decisions.md, "Package install policy"): which installs ask the
 * person first. `ask-when-reaching-out` (the default) asks for packages with outside reach or native code,
 * `always-ask` for every install, `off` refuses installs (403 POLICY_REFUSED). Machine surfaces always ask.
 */
export const InstallMode = Schema.Literal("ask-when-reaching-out", "always-ask", "off").annotations({
  identifier: "InstallMode"
})
export type InstallMode = typeof InstallMode.Type

export const InstallModePreference = preferenceState("execution.installs", InstallMode).annotations({
  identifier: "InstallModePreference"
})

/**
 * `execution.denyRules` (the spec names deny rules without a shape; docs/decisions.md, "Execution policy"): a
 * package tool call that matches every field a rule gives is refused, whatever its origin, the execution mode
 * or an approval says. A rule naming only a package is a prohibition of the whole package.
 */
export const DenyRule = Schema.Struct({
  package: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(214))),
  tool: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))),
  risk: Schema.optional(RiskClass),
  origins: Schema.optional(Schema.Array(Surface).pipe(Schema.minItems(1), Schema.maxItems(6)))
}).pipe(
  Schema.filter((rule) =>
    rule.package !== undefined || rule.tool !== undefined || rule.risk !== undefined || rule.origins !== undefined ||
    "a deny rule must name at least one of package, tool, risk or origins"
  )
).annotations({ identifier: "DenyRule" })
export type DenyRule = typeof DenyRule.Type

export const DenyRules = Schema.Array(DenyRule).pipe(Schema.maxItems(200)).annotations({ identifier: "DenyRules" })

export const DenyRulesPreference = preferenceState("execution.denyRules", DenyRules).annotations({
  identifier: "DenyRulesPreference"
})

/**
 * `composer.projectFolders` (the spec's approved project folders; docs/decisions.md, "Composer"): absolute,
 * normalised paths of existing folders whose files the composer offers. Person-only: a machine surface adding a
 * folder would give itself references to files the person never approved.
 */
export const ProjectFolder = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(1024),
  Schema.filter((folder) => !folder.includes("\0") || "must not contain NUL"),
  Schema.filter((folder) => folder.startsWith("/") || "must be an absolute path")
)
export const ProjectFolders = Schema.Array(ProjectFolder).pipe(Schema.maxItems(32)).annotations({
  identifier: "ProjectFolders"
})

export const ProjectFoldersPreference = preferenceState("composer.projectFolders", ProjectFolders).annotations({
  identifier: "ProjectFoldersPreference"
})

/** `execution.machineTurns` is not person-only: a token holder can change it (the spec says so). */
export class PreferencesGroup extends HttpApiGroup.make("preferences")
  .add(
    HttpApiEndpoint.put("setMachineTurns", "/preferences/execution.machineTurns")
      .setPayload(PreferenceWrite)
      .addSuccess(MachineTurnsPreference)
      .addError(refusals("INVALID_INPUT", "PREFERENCE_INVALID"))
      .middleware(Authenticated)
  )
  // Person-only: a machine surface loosening the install policy would approve its own installs.
  .add(
    HttpApiEndpoint.put("setInstallMode", "/preferences/execution.installs")
      .setPayload(PreferenceWrite)
      .addSuccess(InstallModePreference)
      .addError(refusals("INVALID_INPUT", "PREFERENCE_INVALID"))
      .middleware(PersonOnly)
  )
  // Person-only: a machine surface removing a deny rule would allow itself what the person refused.
  .add(
    HttpApiEndpoint.put("setDenyRules", "/preferences/execution.denyRules")
      .setPayload(PreferenceWrite)
      .addSuccess(DenyRulesPreference)
      .addError(refusals("INVALID_INPUT", "PREFERENCE_INVALID"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.put("setProjectFolders", "/preferences/composer.projectFolders")
      .setPayload(PreferenceWrite)
      .addSuccess(ProjectFoldersPreference)
      .addError(refusals("INVALID_INPUT", "PREFERENCE_INVALID"))
      .middleware(PersonOnly)
  )
{}
