/**
 * Node errors: `{code, message, ...members}` with the status the spec gives
 * each code. One class carries every code; its wire form is declared once per
 * status, so the typed client tells codes apart by `code`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** Every code with its HTTP status. */
export const statusOfCode = {
  REFERENCE_NOT_AVAILABLE: 400,
  INVALID_INPUT: 400,
  INVALID_SCHEMA: 400,
  UNSUPPORTED_ACTION: 400,
  UNKNOWN_ACTION: 400,
  PREFERENCE_INVALID: 400,
  LOCAL_SOURCE_UNREADABLE: 400,
  MAP_TILE_OUT_OF_BOUNDS: 400,
  UNAUTHENTICATED: 401,
  PERSON_ONLY: 403,
  POLICY_REFUSED: 403,
  ARTIFACT_NOT_CREATOR: 403,
  APPROVAL_FORGED: 403,
  INSTANCE_UNKNOWN: 404,
  RESOURCE_NOT_FOUND: 404,
  ARTIFACT_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  MAP_TILES_OFF: 404,
  MAP_TILE_MISSING: 404,
  ALREADY_RETRIED: 409,
  WORK_NOT_RETRYABLE: 409,
  QUESTION_OPEN: 409,
  QUESTION_CLOSED: 409,
  ALREADY_ASKED_AGAIN: 409,
  NOT_AN_UPDATE: 409,
  SURFACE_ACTION: 409,
  ACTION_NOT_OFFERED: 409,
  ACTION_UNAVAILABLE: 409,
  ACTION_IN_PROGRESS: 409,
  ACTION_INTERRUPTED: 409,
  UNDO_EXPIRED: 409,
  EFFECT_NOT_UNKNOWN: 409,
  DIGEST_MISMATCH: 409,
  NOT_INSTALLED: 409,
  DECLARED_REACH_MISMATCH: 409,
  ARTIFACT_NOT_FINALIZED: 409,
  ARTIFACT_INSTANCE_QUOTA_EXCEEDED: 409,
  JOB_NOT_RUNNING: 409,
  SERVICE_CANCELLED: 409,
  APPROVAL_ALREADY_DECIDED: 409,
  APPROVAL_EXPIRED: 409,
  CONVERSATION_BUSY: 409,
  HOST_CONTROL_ANSWERED: 409,
  THEME_LOW_CONTRAST: 409,
  THEME_PROTECTED: 409,
  THEME_NOT_INSTALLED: 409,
  THEME_INVALID: 409,
  THEME_UNAVAILABLE: 409,
  THEME_UNKNOWN: 409,
  RATE_LIMITED: 429,
  BACKGROUND_BUSY: 429,
  MAP_TILES_RATE_LIMITED: 429,
  APPROVALS_PENDING: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_TOOL_FAILED: 502,
  MAP_TILE_FAILED: 502,
  MAP_TILE_REFUSED: 502,
  LEDGER_UNAVAILABLE: 503,
  PACKAGE_CACHE_UNAVAILABLE: 503,
  MAP_TILE_KEY_UNAVAILABLE: 503,
  JOB_UNAVAILABLE: 503,
  MODEL_UNAVAILABLE: 503,
  SERVICE_TIMED_OUT: 504,
  SERVICE_UNREACHABLE: 504
} as const

export type NodeErrorCode = keyof typeof statusOfCode
export const NodeErrorCode = Schema.Literal(...(Object.keys(statusOfCode) as [NodeErrorCode, ...Array<NodeErrorCode>]))

/** A refusal of the node API. `members` are the route-specific fields sent beside code and message. */
export class NodeError extends Schema.TaggedError<NodeError>()("NodeError", {
  code: NodeErrorCode,
  message: Schema.String,
  members: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), {
    default: () => ({})
  })
}) {
  get status(): number {
    return statusOfCode[this.code]
  }
}

export const nodeError = (code: NodeErrorCode, message: string, members: Record<string, unknown> = {}) =>
  new NodeError({ code, message, members })

const codesOf = (status: number) =>
  (Object.keys(statusOfCode) as Array<NodeErrorCode>).filter((code) => statusOfCode[code] === status)

/** The wire form of the node errors of one HTTP status. */
const wireAt = (status: number) => {
  const codes = codesOf(status)
  return Schema.transform(
    Schema.Struct(
      { code: Schema.Literal(...(codes as [NodeErrorCode, ...Array<NodeErrorCode>])), message: Schema.String },
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    ),
    NodeError,
    {
      strict: false,
      decode: ({ code, message, ...members }) => ({ _tag: "NodeError" as const, code, message, members }),
      encode: (error) => ({ ...error.members, code: error.code, message: error.message })
    }
  ).annotations({ ...HttpApiSchema.annotations({ status }), identifier: `NodeError${status}` })
}

export const NodeError400 = wireAt(400)
export const NodeError401 = wireAt(401)
export const NodeError403 = wireAt(403)
export const NodeError404 = wireAt(404)
export const NodeError409 = wireAt(409)
export const NodeError429 = wireAt(429)
export const NodeError500 = wireAt(500)
export const NodeError501 = wireAt(501)
export const NodeError502 = wireAt(502)
export const NodeError503 = wireAt(503)
export const NodeError504 = wireAt(504)
