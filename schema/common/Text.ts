/** Bounded strings and formats shared by both APIs. */
import { Schema } from "effect"

/** An ISO-8601 instant as it travels on the wire. */
export const DateTimeString = Schema.String.annotations({
  identifier: "DateTime",
  jsonSchema: { type: "string", format: "date-time" }
})

/** Lowercase alphanumeric segments joined by single hyphens. */
export const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

export const Slug = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(64),
  Schema.pattern(slugPattern, { message: () => "must be lowercase letters and digits in segments joined by single hyphens" })
).annotations({ identifier: "Slug" })

/** Integers in a query string. */
export const IntFromString = (min: number, max: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, max))

/**
 * A path parameter that may hold `/` or `@` (scoped names, nested slugs). The
 * server's router hands over the decoded value; the typed client does not
 * encode path parameters itself, so encoding here keeps it one segment.
 */
export const PathSegment = (self: Schema.Schema<string, string>) =>
  Schema.transform(Schema.String, self, {
    strict: true,
    decode: (value) => value,
    encode: (value) => encodeURIComponent(value)
  })
