/**
 * Preference writes (`PUT /preferences/<key>` with `{value}`) and the
 * execution-mode preference for turns from other programs.
 *
 * A value that does not fit its preference is refused with 400
 * PREFERENCE_INVALID, nothing stored; so the route payloads carry the value
 * undecoded and the handler decodes it with the preference's own Schema
 * through `decodePreference`, never the generic request-decoding failure.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { NodeError400, nodeError, type NodeError } from "./Errors.js"
import { Authenticated } from "./Security.js"

/** Body of every preference write. The value is checked by the handler against the preference's Schema. */
export const PreferenceWrite = Schema.Struct({
  value: Schema.Unknown.annotations({ description: "The new value of the preference (its shape depends on the key)" })
}).annotations({ identifier: "PreferenceWrite" })
export type PreferenceWrite = typeof PreferenceWrite.Type

/** A preference as stored after a write: its key, value and when it changed. */
export const preferenceState = <const Key extends string, A, I>(key: Key, value: Schema.Schema<A, I>) =>
  Schema.Struct({ key: Schema.Literal(key), value, updatedAt: DateTimeString })

/**
 * Where and why a value does not fit, without quoting the value: what was
 * written may hold a secret pasted into the wrong field.
 */
const problemOf = (error: ParseResult.ParseError): string => {
  const reasons = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const reason = issue.message.replace(/,?\s*actual[\s\S]*$/, "")
    return issue.path.length === 0 ? reason : `${issue.path.map(String).join(".")}: ${reason}`
  })
  // A nullable preference also reports its null branch: noise next to the real reason.
  const telling = reasons.filter((reason) => reason !== "Expected null")
  return (telling.length > 0 ? telling : reasons).join("; ")
}

/** Decodes a written value with the preference's Schema; a value that does not fit is 400 PREFERENCE_INVALID. */
export const decodePreference =
  <A, I>(key: string, schema: Schema.Schema<A, I>) => (value: unknown): Effect.Effect<A, NodeError> =>
    Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "error" })(value).pipe(
      Effect.mapError((error) =>
        nodeError("PREFERENCE_INVALID", `The value does not fit ${key}`, { key, problem: problemOf(error) })
      )
    )

/**
 * `execution.machineTurns`: `ask` makes risky steps of turns from the mcp,
 * relay and cli-api origins ask first; `default` treats them like the person.
 */
export const MachineTurns = Schema.Literal("default", "ask").annotations({ identifier: "MachineTurns" })
export type MachineTurns = typeof MachineTurns.Type

export const MachineTurnsPreference = preferenceState("execution.machineTurns", MachineTurns).annotations({
  identifier: "MachineTurnsPreference"
})

/** Not person-only: a token holder can change this setting (the spec says so). */
export class PreferencesGroup extends HttpApiGroup.make("preferences")
  .add(
    HttpApiEndpoint.put("setMachineTurns", "/preferences/execution.machineTurns")
      .setPayload(PreferenceWrite)
      .addSuccess(MachineTurnsPreference)
      .addError(NodeError400)
      .middleware(Authenticated)
  )
{}
