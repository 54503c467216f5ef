/**
 * Idempotency keys on SQLite or PostgreSQL. A request claims its key with an
 * insert that only one of any number of concurrent requests can win; the
 * winner runs its effect and records the outcome in the same transaction.
 * Expired records are purged as keys are claimed.
 */
import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Effect, Either, Exit, Layer, Option, Schema } from "effect"
import { IdempotencyInProgress, IdempotencyKeyReused } from "../../../schema/marketplace/Errors.js"
import {
  claimLeaseMillis,
  Idempotency,
  type IdempotentRequest,
  type Outcome,
  replayWindowMillis
} from "../../../services/marketplace/Idempotency.js"
import { type Row, text, textOrNull } from "./Rows.js"

const iso = (millis: number) => new Date(millis).toISOString()

type Claim = { readonly _tag: "Fresh" } | { readonly _tag: "Replay"; readonly body: string }

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * A key belongs to its user, whatever the route (unique index of migration 0005):
   * the same key on another route then differs in its request hash, which covers
   * the method and path, and is refused as reused instead of running.
   */
  const matches = (request: IdempotentRequest) =>
    sql`user_id = ${request.userId} AND idempotency_key = ${request.key}`

  /** One attempt; none when the record vanished between the insert and the read (it expired). */
  const claimOnce = (request: IdempotentRequest) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* sql`DELETE FROM idempotency_keys WHERE expires_at <= ${iso(now)}
        OR (${matches(request)} AND state = 'in_progress' AND locked_until <= ${iso(now)})`
      const inserted = yield* sql<Row>`INSERT INTO idempotency_keys
        (user_id, route, idempotency_key, request_hash, state, response_status, response_body,
         created_at, locked_until, expires_at)
        VALUES (${request.userId}, ${request.route}, ${request.key}, ${request.requestHash}, 'in_progress',
          ${null}, ${null}, ${iso(now)}, ${iso(now + claimLeaseMillis)}, ${iso(now + replayWindowMillis)})
        ON CONFLICT DO NOTHING RETURNING state`
      if (inserted.length > 0) return Option.some<Claim>({ _tag: "Fresh" })
      const [row] = yield* sql<Row>`SELECT request_hash, state, response_body FROM idempotency_keys
        WHERE ${matches(request)}`
      if (row === undefined) return Option.none<Claim>()
      if (text(row.requestHash) !== request.requestHash) {
        return yield* new IdempotencyKeyReused({
          message: "This idempotency key was used with another request"
        })
      }
      const body = textOrNull(row.responseBody)
      if (text(row.state) !== "completed" || body === null) {
        return yield* new IdempotencyInProgress({
          message: "A request with this idempotency key is still in progress"
        })
      }
      return Option.some<Claim>({ _tag: "Replay", body })
    })

  const claim = (request: IdempotentRequest): Effect.Effect<Claim, IdempotencyInProgress | IdempotencyKeyReused> =>
    claimOnce(request).pipe(
      Effect.catchTag("SqlError", Effect.die),
      Effect.flatMap(Option.match({ onNone: () => claim(request), onSome: Effect.succeed }))
    )

  const run = <A, E, IA, IE, R>(
    request: IdempotentRequest,
    outcome: Outcome<A, E, IA, IE>,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | IdempotencyInProgress | IdempotencyKeyReused, R> =>
    Effect.gen(function*() {
      const codec = Schema.parseJson(Schema.Either({ right: outcome.success, left: outcome.failure }))
      const claimed = yield* claim(request)
      if (claimed._tag === "Replay") {
        const stored = yield* Effect.orDie(Schema.decode(codec)(claimed.body))
        return yield* Either.match(stored, { onLeft: Effect.fail, onRight: Effect.succeed })
      }
      const complete = (result: Either.Either<A, E>) =>
        Effect.gen(function*() {
          const body = yield* Schema.encode(codec)(result)
          const now = yield* Clock.currentTimeMillis
          yield* sql`UPDATE idempotency_keys SET state = 'completed', response_body = ${body},
            locked_until = ${null}, expires_at = ${iso(now + replayWindowMillis)} WHERE ${matches(request)}`
        }).pipe(Effect.orDie)
      const release = sql`DELETE FROM idempotency_keys WHERE ${matches(request)}`.pipe(Effect.orDie)
      return yield* sql.withTransaction(Effect.tap(effect, (value) => complete(Either.right(value)))).pipe(
        Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die),
        // A transaction that failed left nothing behind: only its answer is kept.
        Effect.tapError((error) => complete(Either.left(error))),
        Effect.onExit((exit) =>
          Exit.isFailure(exit) && Option.isNone(Cause.failureOption(exit.cause)) ? release : Effect.void
        )
      )
    })

  return Idempotency.of({ run })
})

export const layer = Layer.effect(Idempotency, make)
