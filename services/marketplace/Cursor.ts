/**
 * Opaque pagination cursors. A cursor carries the keyset position of the last
 * row and a fingerprint of the parameters that produced it, so it cannot be
 * replayed against another sort or filter; a checksum catches tampering.
 */
import { Either, Schema } from "effect"
import * as crypto from "node:crypto"
import type { Keyset } from "./PackageStore.js"

export type CursorProblem = "malformed" | "foreign"

/**
 * The one-shot `crypto.hash` gives the digest `createHash().update().digest()` gives in about half the time (it runs
 * twice per page); Node 20 before 20.12 lacks it.
 */
const sha256 = typeof crypto.hash === "function"
  ? (value: string) => crypto.hash("sha256", value, "base64url")
  : (value: string) => crypto.createHash("sha256").update(value).digest("base64url")

const digest = (value: string, length: number) => sha256(value).slice(0, length)

/** The fingerprint of a request's sort and filters. */
export const fingerprint = (parameters: Readonly<Record<string, string | undefined>>): string =>
  digest(JSON.stringify(Object.keys(parameters).sort().map((key) => [key, parameters[key] ?? null])), 12)

const Payload = Schema.Tuple(
  Schema.Literal(1),
  Schema.String,
  Schema.Union(Schema.String, Schema.Finite, Schema.Null),
  Schema.Int.pipe(Schema.nonNegative())
)
const decodePayload = Schema.decodeUnknownEither(Schema.parseJson(Payload))

export const encode = (binding: string, keyset: Keyset): string => {
  const payload = Buffer.from(JSON.stringify([1, binding, keyset.value, keyset.id])).toString("base64url")
  return `${payload}.${digest(payload, 8)}`
}

export const decode = (cursor: string, binding: string): Either.Either<Keyset, CursorProblem> => {
  const [payload, checksum, ...rest] = cursor.split(".")
  if (payload === undefined || checksum === undefined || rest.length > 0 || digest(payload, 8) !== checksum) {
    return Either.left("malformed")
  }
  return decodePayload(Buffer.from(payload, "base64url").toString("utf8")).pipe(
    Either.mapLeft((): CursorProblem => "malformed"),
    Either.flatMap(([, bound, value, id]): Either.Either<Keyset, CursorProblem> =>
      bound === binding ? Either.right({ value, id }) : Either.left("foreign")
    )
  )
}
