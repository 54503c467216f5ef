/**
 * A success body sent as JSON without running the endpoint's Schema encoder.
 *
 * HttpApi encodes every success value with the endpoint's schema before it
 * serialises it; on a page of 20 packages that walk cost as much CPU as the
 * rest of the handler. Where the schema's encoded form is its type (no
 * transformations: encoding can only check types and put keys in the declared
 * order) and the value is built field by field, in that order, by our own
 * typed code, the encoder is an identity: skipping it sends the same bytes.
 * HttpApi sends a returned response as it is; status 200 and
 * `application/json` are what the encoder's response carries. Tests compare
 * these bodies with the encoder's output byte for byte.
 *
 * The body stays a string (with its length declared) rather than the
 * Uint8Array `HttpServerResponse.json` makes: Node then writes the head and
 * the body in one piece instead of encoding the text in JavaScript first.
 */
import { HttpServerResponse } from "@effect/platform"
import type { Schema } from "effect"

export const encodedJson = <A>(
  _schema: Schema.Schema<A, A, never>,
  value: NoInfer<A>
): HttpServerResponse.HttpServerResponse => {
  const body = JSON.stringify(value)
  return HttpServerResponse.raw(body, { contentType: "application/json", contentLength: Buffer.byteLength(body) })
}
