/**
 * Node errors on the wire: `{code, message, ...members}` with the status the
 * spec gives each code. The value travelling through handlers is one class,
 * `NodeError`; what an endpoint may answer is declared code by code with
 * `refusals(...)`, each code a wire schema of its own with a literal `code`,
 * so the OpenAPI description lists exactly the codes of each route and the
 * typed client tells them apart.
 *
 * Services and layers never build these: they fail with domain errors that
 * know no HTTP (services/node/*Errors.ts), which src/node/http/Errors.ts maps
 * here.
 */
import { HttpApiSchema } from "@effect/platform"
import { Record as Records, Schema } from "effect"

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
  DELETION_PERMIT_INVALID: 409,
  HOST_CONTROL_ANSWERED: 409,
  OFFERED_ACTION_ANSWERED: 409,
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
  SECRET_STORE_UNAVAILABLE: 503,
  JOB_UNAVAILABLE: 503,
  SERVICE_TIMED_OUT: 504,
  SERVICE_UNREACHABLE: 504
} as const

export type NodeErrorCode = keyof typeof statusOfCode
const allCodes = Object.keys(statusOfCode) as [NodeErrorCode, ...Array<NodeErrorCode>]
export const NodeErrorCode = Schema.Literal(...allCodes)

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

/**
 * Legacy constructor, kept while the turn engine and the error middleware
 * still build wire errors themselves; new code fails with a domain error and
 * maps it with src/node/http/Errors.ts.
 */
export const nodeError = (code: NodeErrorCode, message: string, members: Record<string, unknown> = {}) =>
  new NodeError({ code, message, members })

/** One step of a widget press's workflow report (in successes and as a refusal member). */
export const WorkflowStep = Schema.Struct({
  step: Schema.String,
  status: Schema.Literal("done", "skipped", "failed", "uncertain", "not-run"),
  code: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
}).annotations({ identifier: "WorkflowStep" })

/** The members a widget press refusal carries beside `code` and `message`, where they apply (press rule 2). */
export const pressRefusalMembers = {
  outcome: Schema.optional(Schema.Literal("uncertain", "partial", "refused")),
  mayHaveRun: Schema.optional(Schema.Boolean),
  recorded: Schema.optional(Schema.Boolean),
  readOnly: Schema.optional(Schema.Boolean),
  taskId: Schema.optional(Schema.String),
  effectId: Schema.optional(Schema.String),
  retryAfterMs: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  limit: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  workflow: Schema.optional(Schema.Array(WorkflowStep))
} satisfies Schema.Struct.Fields

/**
 * The members each code carries besides code and message. The wire keeps
 * only these (a member not listed is dropped when encoding), so nothing a
 * client sent is echoed back by accident.
 */
const membersOfCode: { readonly [Code in NodeErrorCode]?: Schema.Struct.Fields } = {
  INVALID_INPUT: {
    field: Schema.optional(Schema.NullOr(Schema.String)),
    issues: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))),
    reason: Schema.optional(Schema.String),
    /** A body, header or nesting over the node's limit: the limit it broke (README, "Request limits of the node"). */
    limitBytes: Schema.optional(Schema.Int),
    /** Where an artifact being written ends, when a chunk did not start there. */
    sizeBytes: Schema.optional(Schema.Int)
  },
  ARTIFACT_INSTANCE_QUOTA_EXCEEDED: {
    /** `instance`: the widget's own 128 MiB; `share`: all conversation artifacts' 1 GiB. */
    scope: Schema.optional(Schema.Literal("instance", "share")),
    limitBytes: Schema.optional(Schema.Int)
  },
  LOCAL_SOURCE_UNREADABLE: {
    reason: Schema.String,
    path: Schema.optional(Schema.String),
    limit: Schema.optional(Schema.Number),
    problem: Schema.optional(Schema.String)
  },
  DIGEST_MISMATCH: { expected: Schema.optional(Schema.String), actual: Schema.optional(Schema.String) },
  DECLARED_REACH_MISMATCH: {
    undeclared: Schema.optional(
      Schema.Array(Schema.Struct({ kind: Schema.String, value: Schema.String, access: Schema.NullOr(Schema.String) }))
    )
  },
  APPROVAL_ALREADY_DECIDED: { status: Schema.optional(Schema.String) },
  /** What the effect is instead of unknown: answered, confirmed, did-not-happen (or still sent). */
  EFFECT_NOT_UNKNOWN: { status: Schema.optional(Schema.String) },
  POLICY_REFUSED: { reason: Schema.optional(Schema.String), ...pressRefusalMembers },
  // Widget presses (spec, "Widget action press"): what became of the call, and how to go on.
  INVALID_SCHEMA: { reason: Schema.optional(Schema.String) },
  UNSUPPORTED_ACTION: { reason: Schema.optional(Schema.String), actionBindingId: Schema.optional(Schema.String) },
  RATE_LIMITED: pressRefusalMembers,
  ACTION_INTERRUPTED: pressRefusalMembers,
  LEDGER_UNAVAILABLE: pressRefusalMembers,
  SERVICE_TIMED_OUT: pressRefusalMembers,
  SERVICE_CANCELLED: pressRefusalMembers,
  SERVICE_UNREACHABLE: pressRefusalMembers,
  SERVICE_TOOL_FAILED: pressRefusalMembers,
  JOB_UNAVAILABLE: { reason: Schema.optional(Schema.String), ...pressRefusalMembers },
  /** The job (or work) that already ended, and how; it stays readable. */
  JOB_NOT_RUNNING: { jobId: Schema.optional(Schema.String), status: Schema.optional(Schema.String) },
  REFERENCE_NOT_AVAILABLE: {
    reference: Schema.Struct({ kind: Schema.String, id: Schema.String })
  },
  PREFERENCE_INVALID: { key: Schema.String, problem: Schema.String },
  MAP_TILE_OUT_OF_BOUNDS: { z: Schema.Number, x: Schema.Number, y: Schema.Number, maxZoom: Schema.Int },
  PERSON_ONLY: { surface: Schema.String },
  // Optional while the turn engine still raises these without them (it moves to ConversationErrors.ts).
  QUESTION_CLOSED: { status: Schema.optional(Schema.String) },
  ALREADY_ASKED_AGAIN: { askedAgainAs: Schema.optional(Schema.NullOr(Schema.String)) },
  CONVERSATION_BUSY: {
    deleted: Schema.optional(Schema.Literal(false)),
    decision: Schema.optional(Schema.Struct({ kind: Schema.Literal("refused"), say: Schema.String }))
  },
  // A permit that cannot delete: the spec's refusal body, and why.
  DELETION_PERMIT_INVALID: {
    deleted: Schema.Literal(false),
    decision: Schema.Struct({ kind: Schema.Literal("refused"), say: Schema.String }),
    reason: Schema.Literal("unknown", "used", "expired", "other-conversation", "other-person")
  },
  MAP_TILES_RATE_LIMITED: { retryAfterSeconds: Schema.Number },
  // The inbox's notice actions and background work (docs/decisions.md, "Inbox and background work").
  SURFACE_ACTION: { action: Schema.optional(Schema.String) },
  ACTION_NOT_OFFERED: { action: Schema.optional(Schema.String) },
  ACTION_UNAVAILABLE: {
    action: Schema.optional(Schema.String),
    unavailable: Schema.Literal("conversation-gone", "work-gone", "package-gone", "already-current")
  },
  ACTION_IN_PROGRESS: { action: Schema.optional(Schema.String) },
  UNDO_EXPIRED: { dismissedAt: Schema.optional(Schema.String) },
  ALREADY_RETRIED: { retriedAs: Schema.optional(Schema.String) },
  WORK_NOT_RETRYABLE: { status: Schema.optional(Schema.String) },
  BACKGROUND_BUSY: { reason: Schema.optional(Schema.String) },
  /** What the offered-action request already is (done, refused, unknown, …): the first answer stands. */
  OFFERED_ACTION_ANSWERED: { requestId: Schema.optional(Schema.String), status: Schema.optional(Schema.String) },
  // `offline` as GET /map-tiles says it (OfflineReason in Maps.ts, which depends on this module).
  MAP_TILE_KEY_UNAVAILABLE: {
    offline: Schema.optional(Schema.Literal("no-provider", "key-unavailable", "key-origin-mismatch"))
  }
}

/** What a NodeError looks like on the wire. */
export type NodeErrorEncoded = {
  readonly code: NodeErrorCode
  readonly message: string
  readonly [member: string]: unknown
}

const wireOf = (code: NodeErrorCode): Schema.Schema<NodeError, NodeErrorEncoded> => {
  const members: Schema.Struct.Fields = membersOfCode[code] ?? {}
  const wire = Schema.Struct({ ...members, code: Schema.Literal(code), message: Schema.String })
  return Schema.transform(wire, NodeError, {
    strict: false,
    decode: ({ code, message, ...members }) => ({ _tag: "NodeError" as const, code, message, members }),
    encode: (error) => ({ ...error.members, code: error.code, message: error.message })
  }).annotations({
    ...HttpApiSchema.annotations({ status: statusOfCode[code] }),
    identifier: `NodeError.${code}`,
    description: `${statusOfCode[code]} ${code}`
  })
}

/**
 * One wire schema per code, made once: the API's error encoder and the
 * OpenAPI components both deduplicate by schema, so every route declaring a
 * code shares the same one.
 */
export const wireOfCode: { readonly [Code in NodeErrorCode]: Schema.Schema<NodeError, NodeErrorEncoded> } = Records.map(
  statusOfCode,
  (_, code) => wireOf(code)
)

/** The codes an endpoint (or a middleware) may answer, for `addError`: `refusals("RESOURCE_NOT_FOUND", "QUESTION_CLOSED")`. */
export const refusals = (...codes: readonly [NodeErrorCode, ...Array<NodeErrorCode>]): Schema.Schema<NodeError, NodeErrorEncoded> =>
  codes.length === 1 ? wireOfCode[codes[0]] : Schema.Union(...codes.map((code) => wireOfCode[code]))

/** The codes of a status (for tests and documentation). */
export const codesOf = (status: number): ReadonlyArray<NodeErrorCode> => allCodes.filter((code) => statusOfCode[code] === status)
