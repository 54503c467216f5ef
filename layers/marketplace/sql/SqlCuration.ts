/**
 * CurationStore on SQLite or PostgreSQL. Each applied decision is written to
 * `curation_log` (the package's status history) and to the audit log, in the
 * transaction of the change.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import type { CollectionCommand } from "../../../schema/marketplace/Catalog.js"
import type { CurationStatus } from "../../../schema/marketplace/Package.js"
import {
  CollectionExists,
  CollectionNotFound,
  CurationStore,
  NotInCollection,
  PackageNotFound,
  ReorderMismatch
} from "../../../services/marketplace/Curation.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import * as SqlAuditLog from "./SqlAuditLog.js"
import { flag, int, type Row, text, textOrNull } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const audit = yield* AuditLog
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  const packageRow = (name: string) =>
    Effect.flatMap(
      sql<Row>`SELECT id, curation_status FROM packages WHERE name = ${name}`,
      ([row]) => row === undefined ? Effect.fail(new PackageNotFound({ name })) : Effect.succeed(row)
    )

  const lockedPackage = sql.onDialectOrElse({
    pg: () => (name: string) => sql<Row>`SELECT id, curation_status FROM packages WHERE name = ${name} FOR UPDATE`,
    orElse: () => (name: string) => sql<Row>`SELECT id, curation_status FROM packages WHERE name = ${name}`
  })

  /** Moves the package to `next` (when `next` says so) and logs the decision. */
  const transition = (
    action: "curation.status" | "curation.featured",
    name: string,
    actorId: string,
    next: (current: CurationStatus) => CurationStatus | undefined,
    reason: string | null
  ) =>
    sql.withTransaction(Effect.gen(function*() {
      // Locked, so that of two simultaneous changes the second logs the first one's result as its `from`.
      const [row] = yield* lockedPackage(name)
      if (row === undefined) return yield* new PackageNotFound({ name })
      const from = text(row.curationStatus) as CurationStatus
      const to = next(from)
      if (to === undefined) return { name, curationStatus: from }
      const now = yield* nowIso
      yield* sql`UPDATE packages SET curation_status = ${to} WHERE id = ${row.id}`
      yield* sql`INSERT INTO curation_log (package_name, actor_id, from_status, to_status, reason, created_at)
        VALUES (${name}, ${actorId}, ${from}, ${to}, ${reason}, ${now})`
      yield* audit.append({
        actorId,
        action,
        targetKind: "package",
        target: name,
        before: { curationStatus: from },
        after: { curationStatus: to, reason }
      })
      return { name, curationStatus: to }
    })).pipe(Effect.catchTag("SqlError", Effect.die))

  const setStatus: CurationStore["Type"]["setStatus"] = ({ actorId, name, reason, status }) =>
    transition("curation.status", name, actorId, () => status, reason ?? null)

  const setFeatured: CurationStore["Type"]["setFeatured"] = ({ actorId, featured, name }) =>
    transition("curation.featured", name, actorId, (current) => featured ? "featured" : current === "featured" ? "listed" : undefined, null)

  const log: CurationStore["Type"]["log"] = (name) =>
    sql<Row>`SELECT package_name, actor_id, from_status, to_status, reason, created_at FROM curation_log
      WHERE package_name = ${name} ORDER BY id`.pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          packageName: text(row.packageName),
          actorId: text(row.actorId),
          from: text(row.fromStatus) as CurationStatus,
          to: text(row.toStatus) as CurationStatus,
          reason: textOrNull(row.reason),
          at: text(row.createdAt)
        }))
      ),
      Effect.orDie
    )

  /**
   * The collection's id, its row locked until the transaction ends. Every command
   * on a collection reads its items and then writes them (the next position, the
   * item already present): without the lock, PostgreSQL's concurrent transactions
   * read the same state, and 10 simultaneous `add_item`s left positions [0,0,0,1]
   * or failed on the primary key. Under READ COMMITTED each statement after the
   * lock sees what the previous holder committed. SQLite runs one transaction at
   * a time on its one connection, so it needs no lock.
   */
  const lockedCollection = sql.onDialectOrElse({
    pg: () => (slug: string) => sql<Row>`SELECT id FROM collections WHERE slug = ${slug} FOR UPDATE`,
    orElse: () => (slug: string) => sql<Row>`SELECT id FROM collections WHERE slug = ${slug}`
  })

  const collectionId = (slug: string) =>
    Effect.flatMap(
      lockedCollection(slug),
      ([row]) => row === undefined ? Effect.fail(new CollectionNotFound({ slug })) : Effect.succeed(row.id)
    )

  const itemNames = (id: unknown) =>
    Effect.map(
      sql<Row>`SELECT p.name FROM collection_items i JOIN packages p ON p.id = i.package_id
        WHERE i.collection_id = ${id} ORDER BY i.position, p.name`,
      (rows) => rows.map((row) => text(row.name))
    )

  const command = (slug: string, command: CollectionCommand) =>
    Effect.gen(function*() {
      const now = yield* nowIso
      switch (command.action) {
        case "create": {
          const created = yield* sql<Row>`INSERT INTO collections
            (slug, title, description, published, position, created_at, updated_at)
            VALUES (${slug}, ${command.title}, ${command.description}, ${flag(dialect, command.published)},
              ${command.position}, ${now}, ${now})
            ON CONFLICT (slug) DO NOTHING RETURNING id`
          if (created.length === 0) return yield* new CollectionExists({ slug })
          return
        }
        case "update": {
          const id = yield* collectionId(slug)
          const changes = {
            ...(command.title === undefined ? {} : { title: command.title }),
            ...(command.description === undefined ? {} : { description: command.description }),
            ...(command.published === undefined ? {} : { published: flag(dialect, command.published) }),
            ...(command.position === undefined ? {} : { position: command.position }),
            updated_at: now
          }
          yield* sql`UPDATE collections SET ${sql.update(changes)} WHERE id = ${id}`
          return
        }
        case "add_item": {
          const id = yield* collectionId(slug)
          const pkg = yield* packageRow(command.packageName)
          const [existing] = yield* sql<Row>`SELECT position FROM collection_items
            WHERE collection_id = ${id} AND package_id = ${pkg.id}`
          if (existing !== undefined) {
            if (command.note !== undefined) {
              yield* sql`UPDATE collection_items SET note = ${command.note}
                WHERE collection_id = ${id} AND package_id = ${pkg.id}`
            }
          } else {
            const [last] = yield* sql<Row>`SELECT MAX(position) AS position FROM collection_items
              WHERE collection_id = ${id}`
            const position = last?.position === null || last?.position === undefined ? 0 : int(last.position) + 1
            yield* sql`INSERT INTO collection_items (collection_id, package_id, position, note)
              VALUES (${id}, ${pkg.id}, ${position}, ${command.note ?? null})`
          }
          yield* sql`UPDATE collections SET updated_at = ${now} WHERE id = ${id}`
          return
        }
        case "remove_item": {
          const id = yield* collectionId(slug)
          const pkg = yield* packageRow(command.packageName)
          const [removed] = yield* sql<Row>`DELETE FROM collection_items
            WHERE collection_id = ${id} AND package_id = ${pkg.id} RETURNING position`
          if (removed === undefined) return yield* new NotInCollection({ slug, name: command.packageName })
          // Positions stay 0..n-1: the items after the removed one move up.
          yield* sql`UPDATE collection_items SET position = position - 1
            WHERE collection_id = ${id} AND position > ${int(removed.position)}`
          yield* sql`UPDATE collections SET updated_at = ${now} WHERE id = ${id}`
          return
        }
        case "reorder": {
          const id = yield* collectionId(slug)
          const current = new Set(yield* itemNames(id))
          const seen = new Set<string>()
          const repeated = new Set<string>()
          for (const name of command.packageNames) (seen.has(name) ? repeated : seen).add(name)
          const missing = [...current].filter((name) => !seen.has(name))
          const unexpected = [...seen].filter((name) => !current.has(name))
          if (missing.length > 0 || unexpected.length > 0 || repeated.size > 0) {
            return yield* new ReorderMismatch({ missing, unexpected, repeated: [...repeated] })
          }
          yield* Effect.forEach(command.packageNames, (name, position) =>
            sql`UPDATE collection_items SET position = ${position}
              WHERE collection_id = ${id} AND package_id = (SELECT id FROM packages WHERE name = ${name})`, {
            discard: true
          })
          yield* sql`UPDATE collections SET updated_at = ${now} WHERE id = ${id}`
          return
        }
      }
    })

  const applyCollectionCommand: CurationStore["Type"]["applyCollectionCommand"] = (slug, input, actorId) =>
    sql.withTransaction(Effect.zipLeft(
      command(slug, input),
      actorId === undefined
        ? Effect.void
        : audit.append({ actorId, action: `collection.${input.action}`, targetKind: "collection", target: slug, after: input })
    )).pipe(Effect.catchTag("SqlError", Effect.die))

  return CurationStore.of({ setStatus, setFeatured, log, applyCollectionCommand })
})

/** Needs only the database: it brings its own way to the audit log. */
export const layer = Layer.effect(CurationStore, make).pipe(Layer.provide(SqlAuditLog.layer))
