/** PageStore on SQLite or PostgreSQL. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { PageKind, PublishedPage } from "../../../schema/marketplace/Page.js"
import { PageStore } from "../../../services/marketplace/PageStore.js"
import { int, json, type Row, text } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const published: PageStore["Type"]["published"] = (slug) =>
    sql<Row>`SELECT pg.id, pg.slug, pg.kind, pg.title, r.id AS revision_id, r.number, r.published_at, r.document
      FROM pages pg JOIN page_revisions r ON r.id = pg.published_revision_id
      WHERE pg.slug = ${slug} AND r.published_at IS NOT NULL`.pipe(
      Effect.map(([row]) =>
        Option.map(Option.fromNullable(row), (row): PublishedPage => ({
          page: { id: text(row.id), slug: text(row.slug), kind: text(row.kind) as PageKind, title: text(row.title) },
          revisionId: text(row.revisionId),
          revisionNumber: int(row.number),
          publishedAt: text(row.publishedAt),
          document: json(row.document)
        }))
      ),
      Effect.orDie
    )

  return PageStore.of({ published })
})

export const layer = Layer.effect(PageStore, make)
