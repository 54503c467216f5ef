/**
 * Idempotency keys: a retried request with the same key gets the answer of
 * the first one instead of acting twice. Keys are scoped to a user and bound to
 * a hash of the request (method, path, body), so the same key on another route
 * is refused as reused; the store is shared by every replica.
 */
import { Context, type Effect, type Schema } from "effect"
import { createHash } from "node:crypto"
import type { IdempotencyInProgress, IdempotencyKeyReused } from "../../schema/marketplace/Errors.js"

/** How long a completed request is replayed. */
export const replayWindowMillis = 24 * 60 * 60 * 1000

/**
 * How long a claim stays in progress without an answer before another request
 * may take the key over (the first one crashed or hung).
 */
export const claimLeaseMillis = 5 * 60 * 1000

export interface IdempotentRequest {
  readonly userId: string
  /** The route template, e.g. `POST /curation/packages/{name}/status`: recorded, not part of the key's scope. */
  readonly route: string
  readonly key: string
  /** See `requestHash`. */
  readonly requestHash: string
}

/** The outcomes worth replaying: a success, or a failure the handler chose. */
export interface Outcome<A, E, IA, IE> {
  readonly success: Schema.Schema<A, IA>
  readonly failure: Schema.Schema<E, IE>
}

export class Idempotency extends Context.Tag("clark/marketplace/Idempotency")<Idempotency, {
  /**
   * Runs `effect` once for the key: it and the record of its outcome commit
   * together, so an effect is never applied without its answer being kept. A
   * request already in flight fails with `IdempotencyInProgress`, a different
   * request under the same key with `IdempotencyKeyReused`, and a completed one
   * is answered with its stored outcome for `replayWindowMillis`. A defect or
   * interruption releases the key.
   */
  readonly run: <A, E, IA, IE, R>(
    request: IdempotentRequest,
    outcome: Outcome<A, E, IA, IE>,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | IdempotencyInProgress | IdempotencyKeyReused, R>
}>() {}

/**
 * SHA-256 over method, concrete path and the decoded body. The body is the
 * decoded value, so key order and defaults of the JSON as sent do not matter.
 */
export const requestHash = (method: string, path: string, body: unknown): string =>
  createHash("sha256").update(JSON.stringify([method, path, body ?? null]), "utf8").digest("hex")

/** Runs `effect` under the key when the request carried one, plainly otherwise. */
export const withKey = <A, E, IA, IE, R>(
  idempotency: Idempotency["Type"],
  key: string | undefined,
  request: Omit<IdempotentRequest, "key">,
  outcome: Outcome<A, E, IA, IE>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | IdempotencyInProgress | IdempotencyKeyReused, R> =>
  key === undefined ? effect : idempotency.run({ ...request, key }, outcome, effect)
