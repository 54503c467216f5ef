/**
 * IndexQueue on SQLite or PostgreSQL. A claim is one statement: on PostgreSQL its inner SELECT takes the row
 * `FOR UPDATE SKIP LOCKED`, so replicas claiming at once each get a different job instead of waiting on the
 * same one; SQLite runs one writer at a time, so the same statement without the clause is already exclusive.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Schema } from "effect"
import { IndexJobId } from "../../../schema/marketplace/Submission.js"
import { type ClaimedJob, IndexQueue, type JobReason } from "../../../services/marketplace/IndexQueue.js"
import { makeId } from "../../../services/common/Ids.js"

const iso = (ms: number) => DateTime.formatIso(DateTime.unsafeMake(ms))

/** A new job's row, due at once (`at`, ISO); `requested` is '' for the registry's latest. */
export const queuedJobRow = (id: string, packageName: string, requested: string, reason: JobReason, at: string) => ({
  id,
  packageName,
  requested,
  version: null,
  reason,
  status: "queued",
  error: null,
  attempts: 0,
  runAfter: at,
  leaseUntil: null,
  worker: null,
  createdAt: at,
  updatedAt: at
})

const ClaimedRow = Schema.Struct({
  id: IndexJobId,
  packageName: Schema.String,
  requested: Schema.String,
  reason: Schema.Literal("submission", "recheck", "reindex"),
  attempts: Schema.Union(Schema.Number, Schema.NumberFromString)
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const skipLocked = sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE SKIP LOCKED"), orElse: () => sql.literal("") })
  const decode = Schema.decodeUnknown(ClaimedRow)

  const claim: IndexQueue["Type"]["claim"] = (worker, leaseMillis) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const at = iso(now)
      const rows = yield* sql`UPDATE index_jobs SET status = 'indexing', worker = ${worker},
          lease_until = ${iso(now + leaseMillis)}, attempts = attempts + 1, updated_at = ${at}
        WHERE id = (SELECT id FROM index_jobs
          WHERE (status = 'queued' AND run_after <= ${at}) OR (status = 'indexing' AND lease_until <= ${at})
          ORDER BY run_after, id LIMIT 1 ${skipLocked})
        RETURNING id, package_name, requested, reason, attempts`
      if (rows.length === 0) return Option.none<ClaimedJob>()
      const row = yield* decode(rows[0])
      return Option.some<ClaimedJob>({
        id: row.id,
        packageName: row.packageName,
        requested: row.requested === "" ? undefined : row.requested,
        reason: row.reason,
        attempts: row.attempts
      })
    }).pipe(Effect.orDie, Effect.withSpan("IndexQueue.claim"))

  /** Ends the job if `worker` still holds it; false when its lease was lost to another worker. */
  const settle = (job: ClaimedJob, worker: string, set: {
    readonly status: "queued" | "indexed" | "failed"
    readonly error: string | null
    readonly version?: string
    readonly runAfter?: number
  }) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`UPDATE index_jobs SET status = ${set.status}, error = ${set.error},
          version = COALESCE(${set.version ?? null}, version), run_after = ${iso(set.runAfter ?? now)},
          lease_until = NULL, worker = NULL, updated_at = ${iso(now)}
        WHERE id = ${job.id} AND worker = ${worker} AND status = 'indexing'
        RETURNING id`
      return rows.length > 0
    }).pipe(Effect.orDie)

  const finish: IndexQueue["Type"]["finish"] = (job, worker, version) =>
    settle(job, worker, { status: "indexed", error: null, version })
  const retry: IndexQueue["Type"]["retry"] = (job, worker, error, runAfter) =>
    settle(job, worker, { status: "queued", error, runAfter })
  const fail: IndexQueue["Type"]["fail"] = (job, worker, error) => settle(job, worker, { status: "failed", error })

  const queueRechecks = Effect.gen(function*() {
    const now = iso(yield* Clock.currentTimeMillis)
    const packages = yield* sql<{ readonly name: string }>`SELECT name FROM packages WHERE latest_version IS NOT NULL`
    let queued = 0
    for (const { name } of packages) {
      const id = yield* makeId("ixj")
      // A job already queued or running for the latest version is left as it is.
      const rows = yield* sql`INSERT INTO index_jobs ${sql.insert(queuedJobRow(id, name, "", "recheck", now))}
        ON CONFLICT (package_name, requested) DO UPDATE SET status = 'queued', reason = 'recheck', error = NULL,
          attempts = 0, run_after = excluded.run_after, updated_at = excluded.updated_at
        WHERE index_jobs.status IN ('indexed', 'failed')
        RETURNING id`
      queued += rows.length
    }
    return queued
  }).pipe(Effect.orDie, Effect.withSpan("IndexQueue.queueRechecks"))

  return IndexQueue.of({ claim, finish, retry, fail, queueRechecks })
})

export const layer = Layer.effect(IndexQueue, make)
