/**
 * A preference value that does not fit its preference: refused whole,
 * nothing stored. Checked here, with the preference's own Schema, rather than
 * by the route's payload decoding, so the refusal is PREFERENCE_INVALID and
 * never the generic INVALID_INPUT.
 */
import { Effect, ParseResult, Schema } from "effect"

export class PreferenceInvalid extends Schema.TaggedError<PreferenceInvalid>()("PreferenceInvalid", {
  key: Schema.String,
  /** Where and why, without the value. */
  problem: Schema.String
}) {}

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

/** Decodes a written value with the preference's Schema. */
export const decodePreference =
  <A, I>(key: string, schema: Schema.Schema<A, I>) => (value: unknown): Effect.Effect<A, PreferenceInvalid> =>
    Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "error" })(value).pipe(
      Effect.mapError((error) => new PreferenceInvalid({ key, problem: problemOf(error) }))
    )
