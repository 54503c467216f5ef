/**
 * Marketplace errors. Each code is its own class so the typed client can tell
 * them apart; on the wire every one of them is the envelope
 * `{error: {code, message, requestId, details?}}`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const fields = {
  message: Schema.String,
  /** Filled in by the server's error middleware; handlers leave it empty. */
  requestId: Schema.String.pipe(Schema.propertySignature, Schema.withConstructorDefault(() => "")),
  details: Schema.optional(Schema.Unknown)
}

export const ErrorCode = Schema.Literal(
  "bad_request",
  "validation_failed",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "idempotency_key_reused",
  "idempotency_in_progress",
  "rate_limited",
  "configuration_error",
  "not_implemented",
  "internal_error",
  "precondition_failed",
  "precondition_required"
)
export type ErrorCode = typeof ErrorCode.Type

export const ErrorEnvelope = <const Code extends ErrorCode>(code: Code) =>
  Schema.Struct({
    error: Schema.Struct({
      code: Schema.Literal(code),
      message: Schema.String,
      requestId: Schema.String,
      details: Schema.optional(Schema.Unknown)
    })
  })

export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields) {}
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", fields) {}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {}
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", fields) {}
export class IdempotencyInProgress
  extends Schema.TaggedError<IdempotencyInProgress>()("IdempotencyInProgress", fields)
{}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", fields) {}
export class ConfigurationError extends Schema.TaggedError<ConfigurationError>()("ConfigurationError", fields) {}
export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", fields) {}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {}
/** A write whose `If-Match` names a version that is no longer current (412). */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", fields) {}
/** A guarded write without `If-Match` (428). */
export class PreconditionRequired extends Schema.TaggedError<PreconditionRequired>()("PreconditionRequired", fields) {}

export type MarketplaceError =
  | BadRequest
  | ValidationFailed
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | IdempotencyKeyReused
  | IdempotencyInProgress
  | RateLimited
  | ConfigurationError
  | NotImplemented
  | InternalError
  | PreconditionFailed
  | PreconditionRequired

interface ErrorEncoded {
  readonly _tag: string
  readonly message: string
  readonly requestId: string
  readonly details?: unknown
}

/** The wire form of an error class: the envelope with a literal code, carrying its HTTP status. */
const wire = <E, I extends ErrorEncoded>(self: Schema.Schema<E, I>, code: ErrorCode, status: number) => {
  const tag = tagOf(self)
  return Schema.transform(ErrorEnvelope(code), self, {
    strict: false,
    decode: ({ error }) =>
      ({
        _tag: tag,
        message: error.message,
        requestId: error.requestId,
        ...(error.details === undefined ? {} : { details: error.details })
      }) as unknown as I,
    encode: (e: I) => ({
      error: {
        code,
        message: e.message,
        requestId: e.requestId,
        ...(e.details === undefined ? {} : { details: e.details })
      }
    })
  }).annotations({ ...HttpApiSchema.annotations({ status }), identifier: `Error.${code}` })
}

const tagOf = (self: Schema.Schema.Any): string => {
  const tag = (self as unknown as { readonly _tag?: string })._tag
  if (tag === undefined) throw new Error("error class without a tag")
  return tag
}

export const BadRequestWire = wire(BadRequest, "bad_request", 400)
export const ValidationFailedWire = wire(ValidationFailed, "validation_failed", 400)
export const UnauthorizedWire = wire(Unauthorized, "unauthorized", 401)
export const ForbiddenWire = wire(Forbidden, "forbidden", 403)
export const NotFoundWire = wire(NotFound, "not_found", 404)
export const ConflictWire = wire(Conflict, "conflict", 409)
export const IdempotencyInProgressWire = wire(IdempotencyInProgress, "idempotency_in_progress", 409)
export const IdempotencyKeyReusedWire = wire(IdempotencyKeyReused, "idempotency_key_reused", 422)
export const RateLimitedWire = wire(RateLimited, "rate_limited", 429)
export const InternalErrorWire = wire(InternalError, "internal_error", 500)
export const ConfigurationErrorWire = wire(ConfigurationError, "configuration_error", 500)
export const NotImplementedWire = wire(NotImplemented, "not_implemented", 501)
export const PreconditionFailedWire = wire(PreconditionFailed, "precondition_failed", 412)
export const PreconditionRequiredWire = wire(PreconditionRequired, "precondition_required", 428)

/** The wire form of each error class, by tag: the envelope and its status. */
export const wireByTag = {
  BadRequest: BadRequestWire,
  ValidationFailed: ValidationFailedWire,
  Unauthorized: UnauthorizedWire,
  Forbidden: ForbiddenWire,
  NotFound: NotFoundWire,
  Conflict: ConflictWire,
  IdempotencyKeyReused: IdempotencyKeyReusedWire,
  IdempotencyInProgress: IdempotencyInProgressWire,
  RateLimited: RateLimitedWire,
  ConfigurationError: ConfigurationErrorWire,
  NotImplemented: NotImplementedWire,
  InternalError: InternalErrorWire,
  PreconditionFailed: PreconditionFailedWire,
  PreconditionRequired: PreconditionRequiredWire
} as const

/** Class of each code, so the server can rebuild an error with its request id. */
export const errorClasses = {
  BadRequest,
  ValidationFailed,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  IdempotencyKeyReused,
  IdempotencyInProgress,
  RateLimited,
  ConfigurationError,
  NotImplemented,
  InternalError,
  PreconditionFailed,
  PreconditionRequired
} as const

export const isMarketplaceError = (u: unknown): u is MarketplaceError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in errorClasses &&
  u instanceof errorClasses[u._tag as keyof typeof errorClasses]
