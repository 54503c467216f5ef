/**
 * Refusals of who is asking, before any route's work: a missing or wrong
 * local token, and a machine surface on a person-only route. The mapping
 * module (src/node/http/Errors.ts) gives them their wire codes.
 */
import { Schema } from "effect"
import { Surface } from "../../schema/node/Security.js"

/** No local token, or not the node's. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {}) {}

/** A person-only route asked from a machine surface (the relay, MCP, the command-line api). */
export class PersonOnlyRefused extends Schema.TaggedError<PersonOnlyRefused>()("PersonOnlyRefused", {
  surface: Surface
}) {}

export type AccessError = Unauthenticated | PersonOnlyRefused
