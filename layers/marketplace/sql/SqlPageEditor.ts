/**
 * PageEditor on SQLite or PostgreSQL. A guarded write starts with one
 * conditional `UPDATE … SET version = version + 1 WHERE version IN (…)`: on
 * PostgreSQL a concurrent write from the same version waits for the row lock,
 * re-reads the row and matches nothing; SQLite runs one transaction at a time.
 * Whatever fails after it (no such revision, nothing published) rolls the
 * version back with the transaction.
 */
import { SqlClient, SqlError } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { PageKind } from "../../../schema/marketplace/Page.js"
import type { PageState, Revision, RevisionSummary } from "../../../schema/marketplace/PageAdmin.js"
import { AuditLog } from "../../../services/marketplace/AuditLog.js"
import {
  type Guarded,
  NotPublished,
  PageEditor,
  PageExists,
  PageNotFound,
  RevisionNotFound,
  StaleVersion
} from "../../../services/marketplace/PageEditor.js"
import { int, json, type Row, text, textOrNull } from "./Rows.js"

const revisionSummary = (row: Row, prefix: string): RevisionSummary | null =>
  row[`${prefix}Id`] === null || row[`${prefix}Id`] === undefined ? null : {
    id: text(row[`${prefix}Id`]),
    number: int(row[`${prefix}Number`]),
    createdAt: text(row[`${prefix}CreatedAt`]),
    publishedAt: textOrNull(row[`${prefix}PublishedAt`])
  }

const toState = (row: Row): PageState => ({
  id: text(row.id),
  slug: text(row.slug),
  kind: text(row.kind) as PageKind,
  title: text(row.title),
  version: int(row.version),
  publishedRevision: revisionSummary(row, "pub"),
  latestRevision: revisionSummary(row, "last"),
  createdAt: text(row.createdAt),
  updatedAt: text(row.updatedAt)
})

const toSummary = (row: Row): RevisionSummary => ({
  id: text(row.id),
  number: int(row.number),
  createdAt: text(row.createdAt),
  publishedAt: textOrNull(row.publishedAt)
})

/** What the audit log keeps of a page: no documents, only which revisions are where. */
const auditState = (page: PageState) => ({
  version: page.version,
  publishedRevision: page.publishedRevision?.number ?? null,
  latestRevision: page.latestRevision?.number ?? null
})

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const audit = yield* AuditLog
  const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

  const states = (where: ReturnType<typeof sql.and>) =>
    sql<Row>`SELECT pg.id, pg.slug, pg.kind, pg.title, pg.version, pg.created_at, pg.updated_at,
        pr.id AS pub_id, pr.number AS pub_number, pr.created_at AS pub_created_at, pr.published_at AS pub_published_at,
        lr.id AS last_id, lr.number AS last_number, lr.created_at AS last_created_at,
        lr.published_at AS last_published_at
      FROM pages pg
        LEFT JOIN page_revisions pr ON pr.id = pg.published_revision_id
        LEFT JOIN page_revisions lr ON lr.page_id = pg.id
          AND lr.number = (SELECT MAX(number) FROM page_revisions m WHERE m.page_id = pg.id)
      WHERE ${where} ORDER BY pg.slug`.pipe(Effect.map((rows) => rows.map(toState)))

  const state = (slug: string) => Effect.map(states(sql.and([sql`pg.slug = ${slug}`])), (rows) => Option.fromNullable(rows[0]))

  /** The page's state after a write inside the transaction: the row is there, it was just updated. */
  const current = (slug: string) =>
    Effect.flatMap(state(slug), Option.match({ onNone: () => Effect.die(`page ${slug} vanished`), onSome: Effect.succeed }))

  /**
   * Moves the version when it is one of `expected`; otherwise fails with why
   * not. Answers the page as it was before the write: read after the update,
   * under its row lock, so nothing else has changed it since.
   */
  const advance = ({ expected, slug }: Guarded, now: string) =>
    Effect.gen(function*() {
      const moved = expected.length === 0 ? [] : yield* sql<Row>`UPDATE pages SET version = version + 1,
          updated_at = ${now} WHERE slug = ${slug} AND ${sql.in("version", expected)} RETURNING id`
      if (moved.length === 0) {
        const [row] = yield* sql<Row>`SELECT version FROM pages WHERE slug = ${slug}`
        if (row === undefined) return yield* new PageNotFound({ slug })
        return yield* new StaleVersion({ current: int(row.version) })
      }
      const page = yield* current(slug)
      return { ...page, version: page.version - 1 }
    })

  const record = (actorId: string, action: string, before: PageState | null, after: PageState) =>
    audit.append({
      actorId,
      action,
      targetKind: "page",
      target: after.slug,
      before: before === null ? null : auditState(before),
      after: auditState(after)
    })

  /** A database failure is a defect; the store's own failures roll back and stay typed. */
  const transaction = <A, E>(effect: Effect.Effect<A, E | SqlError.SqlError>): Effect.Effect<A, E> =>
    sql.withTransaction(effect).pipe(Effect.catchIf((e): e is SqlError.SqlError => e instanceof SqlError.SqlError, Effect.die))

  const list: PageEditor["Type"]["list"] = states(sql.and([])).pipe(Effect.orDie)

  const get: PageEditor["Type"]["get"] = (slug) => state(slug).pipe(Effect.orDie)

  const create: PageEditor["Type"]["create"] = ({ actorId, kind, slug, title }) =>
    transaction(Effect.gen(function*() {
      const now = yield* nowIso
      const inserted = yield* sql<Row>`INSERT INTO pages (id, slug, kind, title, published_revision_id, created_at,
          updated_at, version)
        VALUES (${`pg_${randomUUID()}`}, ${slug}, ${kind}, ${title}, ${null}, ${now}, ${now}, 1)
        ON CONFLICT (slug) DO NOTHING RETURNING id`
      if (inserted.length === 0) return yield* new PageExists({ slug })
      const page = yield* current(slug)
      yield* record(actorId, "page.create", null, page)
      return page
    }))

  const revisions: PageEditor["Type"]["revisions"] = (slug) =>
    Effect.gen(function*() {
      const [page] = yield* sql<Row>`SELECT id FROM pages WHERE slug = ${slug}`
      if (page === undefined) return Option.none()
      const rows = yield* sql<Row>`SELECT id, number, created_at, published_at FROM page_revisions
        WHERE page_id = ${page.id} ORDER BY number DESC`
      return Option.some(rows.map(toSummary))
    }).pipe(Effect.orDie)

  const revision: PageEditor["Type"]["revision"] = (slug, number) =>
    sql<Row>`SELECT r.id, r.number, r.created_at, r.published_at, r.document
      FROM page_revisions r JOIN pages pg ON pg.id = r.page_id
      WHERE pg.slug = ${slug} AND r.number = ${number}`.pipe(
      Effect.map(([row]) =>
        Option.map(Option.fromNullable(row), (row): Revision => ({ ...toSummary(row), document: json(row.document) }))
      ),
      Effect.orDie
    )

  const saveDraft: PageEditor["Type"]["saveDraft"] = (input) =>
    transaction(Effect.gen(function*() {
      const now = yield* nowIso
      const before = yield* advance(input, now)
      const [highest] = yield* sql<Row>`SELECT COALESCE(MAX(number), 0) AS number FROM page_revisions
        WHERE page_id = ${before.id}`
      const stored: Revision = {
        id: `rev_${randomUUID()}`,
        number: int(highest?.number) + 1,
        createdAt: now,
        publishedAt: null,
        document: input.document
      }
      yield* sql`INSERT INTO page_revisions (id, page_id, number, document, created_at, published_at) VALUES (
        ${stored.id}, ${before.id}, ${stored.number}, ${JSON.stringify(input.document)}, ${now}, ${null})`
      const page = yield* current(input.slug)
      yield* record(input.actorId, "page.draft", before, page)
      return { page, revision: stored }
    }))

  const publish: PageEditor["Type"]["publish"] = (input) =>
    transaction(Effect.gen(function*() {
      const now = yield* nowIso
      const before = yield* advance(input, now)
      const [target] = yield* sql<Row>`SELECT id FROM page_revisions
        WHERE page_id = ${before.id} AND number = ${input.revisionNumber}`
      if (target === undefined) return yield* new RevisionNotFound({ slug: input.slug, number: input.revisionNumber })
      yield* sql`UPDATE page_revisions SET published_at = ${now} WHERE id = ${target.id}`
      yield* sql`UPDATE pages SET published_revision_id = ${target.id} WHERE id = ${before.id}`
      const page = yield* current(input.slug)
      yield* record(input.actorId, "page.publish", before, page)
      return page
    }))

  const unpublish: PageEditor["Type"]["unpublish"] = (input) =>
    transaction(Effect.gen(function*() {
      const before = yield* advance(input, yield* nowIso)
      if (before.publishedRevision === null) return yield* new NotPublished({ slug: input.slug })
      yield* sql`UPDATE pages SET published_revision_id = ${null} WHERE id = ${before.id}`
      const page = yield* current(input.slug)
      yield* record(input.actorId, "page.unpublish", before, page)
      return page
    }))

  return PageEditor.of({ list, get, create, revisions, revision, saveDraft, publish, unpublish })
})

export const layer = Layer.effect(PageEditor, make)
