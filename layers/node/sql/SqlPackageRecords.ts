/** PackageRecords on the node's SQLite database; rows decoded with Schemas. */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Ref, Schema } from "effect"
import { Manifest } from "../../../schema/node/Manifest.js"
import { ApprovalEvent, ApprovalStatus, InstallApproval } from "../../../schema/node/Package.js"
import { Permission } from "../../../schema/marketplace/Package.js"
import { type ApprovalRecord, type InstalledPackage, PackageRecords } from "../../../services/node/PackageRecords.js"

const Source = Schema.Literal("local", "marketplace")

const LocalRow = Schema.Struct({ packageId: Schema.String, path: Schema.String, addedAt: Schema.String })

const InstalledRow = Schema.Struct({
  packageId: Schema.String,
  source: Source,
  version: Schema.String,
  digest: Schema.String,
  contentDigest: Schema.String,
  cachePath: Schema.String,
  manifest: Schema.parseJson(Manifest),
  installedAt: Schema.String
})

const ApprovalRow = Schema.Struct({
  id: Schema.String,
  packageId: Schema.String,
  source: Source,
  version: Schema.String,
  digest: Schema.String,
  contentDigest: Schema.String,
  operationDigest: Schema.String,
  asksFor: Schema.parseJson(Schema.Array(Permission)),
  riskTier: InstallApproval.fields.riskTier,
  status: ApprovalStatus,
  askedBy: Schema.String,
  requestedAt: Schema.String,
  expiresAt: Schema.String,
  decidedAt: Schema.NullOr(Schema.String)
})

const EventRow = Schema.Struct({ ...ApprovalEvent.fields, seq: Schema.Number })

const decodeAll = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknown(Schema.Array(schema))

const toApproval = ({ id, ...row }: typeof ApprovalRow.Type): ApprovalRecord => ({ approvalId: id, ...row })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const revision = yield* Ref.make(0)
  const now = Effect.map(Clock.currentTimeMillis, (millis) => DateTime.formatIso(DateTime.unsafeMake(millis)))

  const approvals = (rows: ReadonlyArray<unknown>) => Effect.map(decodeAll(ApprovalRow)(rows), (list) => list.map(toApproval))

  const addLocal: PackageRecords["Type"]["addLocal"] = (source) =>
    sql`INSERT INTO local_packages ${sql.insert({ ...source })}
      ON CONFLICT (package_id) DO UPDATE SET path = excluded.path, added_at = excluded.added_at`.pipe(Effect.asVoid, Effect.orDie)

  const localSources = sql`SELECT * FROM local_packages ORDER BY package_id`.pipe(
    Effect.flatMap(decodeAll(LocalRow)),
    Effect.orDie
  )

  const installed = sql`SELECT * FROM installed_packages ORDER BY package_id`.pipe(
    Effect.flatMap(decodeAll(InstalledRow)),
    Effect.orDie
  )

  const installedOne = (packageId: string) =>
    sql`SELECT * FROM installed_packages WHERE package_id = ${packageId}`.pipe(
      Effect.flatMap(decodeAll(InstalledRow)),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const eventAt = (event: { approvalId: string; packageId: string; version: string; outcome: string; reason: string | null }, at: string) =>
    sql`INSERT INTO install_approval_events ${sql.insert({ ...event, at })}`

  const recordInstall = (pkg: InstalledPackage, approvalId: string | null) =>
    Effect.gen(function*() {
      const row = yield* Schema.encode(InstalledRow)(pkg)
      yield* sql`INSERT INTO installed_packages ${sql.insert(row)} ON CONFLICT (package_id) DO UPDATE SET
        source = excluded.source, version = excluded.version, digest = excluded.digest,
        content_digest = excluded.content_digest, cache_path = excluded.cache_path, manifest = excluded.manifest,
        installed_at = excluded.installed_at`
      if (approvalId !== null) {
        yield* eventAt(
          { approvalId, packageId: pkg.packageId, version: pkg.version, outcome: "installed", reason: null },
          pkg.installedAt
        )
      }
    }).pipe(sql.withTransaction, Effect.zipLeft(Ref.update(revision, (n) => n + 1)), Effect.orDie)

  const insertApproval = (approval: ApprovalRecord) =>
    Effect.gen(function*() {
      const { approvalId, ...rest } = approval
      const row = yield* Schema.encode(ApprovalRow)({ id: approvalId, ...rest })
      yield* sql`INSERT INTO install_approvals ${sql.insert(row)}`
      yield* eventAt(
        { approvalId, packageId: approval.packageId, version: approval.version, outcome: "asked", reason: null },
        approval.requestedAt
      )
    }).pipe(sql.withTransaction, Effect.orDie)

  const approval = (approvalId: string) =>
    sql`SELECT * FROM install_approvals WHERE id = ${approvalId}`.pipe(
      Effect.flatMap(approvals),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const waitingFor = (packageId: string, version: string, contentDigest: string) =>
    sql`SELECT * FROM install_approvals WHERE status = 'waiting' AND package_id = ${packageId}
        AND version = ${version} AND content_digest = ${contentDigest} ORDER BY requested_at LIMIT 1`.pipe(
      Effect.flatMap(approvals),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const waiting = sql`SELECT * FROM install_approvals WHERE status = 'waiting' ORDER BY requested_at`.pipe(
    Effect.flatMap(approvals),
    Effect.orDie
  )

  const transition: PackageRecords["Type"]["transition"] = (approvalId, from, to, event) =>
    Effect.gen(function*() {
      const at = yield* now
      const moved = yield* sql<{ packageId: string; version: string }>`UPDATE install_approvals
        SET status = ${to}, decided_at = COALESCE(decided_at, ${at})
        WHERE id = ${approvalId} AND ${sql.in("status", from)} RETURNING package_id, version`
      const row = moved[0]
      if (row === undefined) return false
      if (event !== null) yield* eventAt({ approvalId, packageId: row.packageId, version: row.version, ...event }, at)
      if (to === "expired") {
        yield* sql`INSERT INTO notices ${
          sql.insert({
            id: `ntc_${approvalId}`,
            kind: "install-approval-expired",
            conversationId: null,
            subjectId: approvalId,
            data: JSON.stringify({ packageId: row.packageId, version: row.version, actions: ["dismiss"] }),
            state: "unread",
            createdAt: at
          })
        }`
      }
      return true
    }).pipe(sql.withTransaction, Effect.orDie)

  const appendEvent: PackageRecords["Type"]["appendEvent"] = (event) =>
    Effect.flatMap(now, (at) => eventAt(event, at)).pipe(Effect.asVoid, Effect.orDie)

  const events = (after: number, limit: number) =>
    sql`SELECT * FROM install_approval_events WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`.pipe(
      Effect.flatMap(decodeAll(EventRow)),
      Effect.orDie
    )

  return PackageRecords.of({
    addLocal,
    localSources,
    installed,
    installedOne,
    revision: Ref.get(revision),
    recordInstall,
    insertApproval,
    approval,
    waitingFor,
    waiting,
    transition,
    appendEvent,
    events
  })
})

export const layer = Layer.effect(PackageRecords, make)
