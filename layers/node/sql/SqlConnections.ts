/**
 * Connections on the node's SQLite database: issued states as SHA-256 hashes with their package and expiry
 * (on Effect's Clock), spent by one `DELETE … RETURNING`, so of two requests carrying the same state exactly
 * one gets the row. The code is handed to PackageCredentials, which checks the package again.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import {
  type CallbackOutcome,
  type CallbackParams,
  codeCredentialName,
  Connections,
  hashState,
  type IssuedState,
  providerAnswer,
  readCallback,
  stateHolds,
  stateLifetime,
  waitingPerPackage
} from "../../../services/node/Connections.js"
import { PackageCredentials } from "../../../services/node/PackageCredentials.js"

const IssuedRow = Schema.Struct({ packageId: Schema.String, expiresAtMs: Schema.Number })
const decodeIssued = Schema.decodeUnknown(Schema.Array(IssuedRow))

const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const credentials = yield* PackageCredentials

  const start = (packageId: string) =>
    Effect.gen(function*() {
      yield* credentials.admits(packageId)
      const now = yield* Clock.currentTimeMillis
      // 256 random bits: guessing one is out of reach, and only its hash is stored.
      const state = `cst_${randomBytes(32).toString("base64url")}`
      const expiresAtMillis = now + Duration.toMillis(stateLifetime)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM connection_states WHERE expires_at_ms <= ${now}`
        yield* sql`INSERT INTO connection_states ${
          sql.insert({ stateHash: hashState(state), packageId, issuedAt: iso(now), expiresAtMs: expiresAtMillis })
        }`
        yield* sql`DELETE FROM connection_states WHERE package_id = ${packageId} AND seq NOT IN (
          SELECT seq FROM connection_states WHERE package_id = ${packageId} ORDER BY seq DESC LIMIT ${waitingPerPackage}
        )`
      })).pipe(Effect.orDie)
      return { state, expiresAt: iso(expiresAtMillis) }
    }).pipe(Effect.withSpan("Connections.start"))

  /** Spends the state: whoever deletes the row holds it, once. */
  const spend = (state: string) =>
    sql`DELETE FROM connection_states WHERE state_hash = ${hashState(state)} RETURNING package_id, expires_at_ms`.pipe(
      Effect.flatMap(decodeIssued),
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row): IssuedState => ({
          packageId: row.packageId,
          expiresAtMillis: row.expiresAtMs
        }))
      ),
      Effect.orDie
    )

  const complete = (packageId: string, params: CallbackParams): Effect.Effect<CallbackOutcome> =>
    Effect.gen(function*() {
      const read = readCallback(params)
      if (read.kind !== "read") return read.kind
      const issued = yield* spend(read.state)
      if (!stateHolds(issued, packageId, yield* Clock.currentTimeMillis)) return "refused" as const
      const answer = providerAnswer(read)
      if (answer !== "code") return answer
      return yield* credentials.store(packageId, codeCredentialName, Redacted.make(read.code!)).pipe(
        Effect.as<CallbackOutcome>("connected"),
        Effect.catchTags({
          PackageNotInstalled: () => Effect.succeed<CallbackOutcome>("package-gone"),
          TileKeyConsumer: () => Effect.succeed<CallbackOutcome>("not-admitted"),
          CredentialStoreUnavailable: () => Effect.succeed<CallbackOutcome>("unavailable"),
          // The name is the node's own: refusing it is a bug, not the caller's doing.
          CredentialNameInvalid: () => Effect.dieMessage("the connection code's credential name was refused"),
          SecretNameReserved: () => Effect.dieMessage("the connection code's credential name was refused")
        })
      )
    }).pipe(Effect.withSpan("Connections.complete"))

  return Connections.of({ start, complete })
})

export const layer: Layer.Layer<Connections, never, SqlClient.SqlClient | PackageCredentials> = Layer.effect(
  Connections,
  make
)
