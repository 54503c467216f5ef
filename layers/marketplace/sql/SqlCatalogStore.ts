/** CatalogStore on SQLite or PostgreSQL. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { Category, CollectionState } from "../../../schema/marketplace/Catalog.js"
import type { CurationStatus } from "../../../schema/marketplace/Package.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { bool, flag, int, type Row, statusIn, summaryColumns, text, textOrNull, toSummary } from "./Rows.js"

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const published = flag(sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const }), true)

  const toCategory = (row: Row): Category => ({
    slug: text(row.slug),
    name: text(row.name),
    description: text(row.description),
    packageCount: int(row.packageCount)
  })

  const categoryRows = (counted: ReadonlyArray<CurationStatus>, slug?: string) =>
    sql<Row>`SELECT c.slug, c.name, c.description,
        (SELECT COUNT(*) FROM packages p
          WHERE p.category_slug = c.slug AND ${sql.literal(statusIn("p.curation_status", counted))}) AS package_count
      FROM categories c ${slug === undefined ? sql`` : sql`WHERE c.slug = ${slug}`}
      ORDER BY c.position, c.slug`

  const categories: CatalogStore["Type"]["categories"] = (counted) =>
    categoryRows(counted).pipe(Effect.map((rows) => rows.map(toCategory)), Effect.orDie)

  const category: CatalogStore["Type"]["category"] = (slug, counted) =>
    categoryRows(counted, slug).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toCategory)),
      Effect.orDie
    )

  const summaryOf = (row: Row) => ({ slug: text(row.slug), title: text(row.title), description: text(row.description) })

  const publishedCollections: CatalogStore["Type"]["publishedCollections"] = sql<Row>`
    SELECT slug, title, description FROM collections WHERE published = ${published}
    ORDER BY position, slug`.pipe(Effect.map((rows) => rows.map(summaryOf)), Effect.orDie)

  const publishedCollection: CatalogStore["Type"]["publishedCollection"] = (slug, statuses) =>
    Effect.gen(function*() {
      const [collection] = yield* sql<Row>`SELECT id, slug, title, description FROM collections
        WHERE slug = ${slug} AND published = ${published}`
      if (collection === undefined) return Option.none()
      // Raw column names: toSummary reads them as the database returns them.
      const packages = yield* sql.withoutTransforms()<Row>`SELECT ${sql.literal(summaryColumns)}
        FROM collection_items i JOIN packages p ON p.id = i.package_id
          LEFT JOIN publishers pub ON pub.id = p.publisher_id
        WHERE i.collection_id = ${collection.id} AND ${sql.literal(statusIn("p.curation_status", statuses))}
        ORDER BY i.position, p.name`
      return Option.some({ ...summaryOf(collection), packages: packages.map(toSummary) })
    }).pipe(Effect.orDie)

  const collectionState: CatalogStore["Type"]["collectionState"] = (slug) =>
    Effect.gen(function*() {
      const [collection] = yield* sql<Row>`SELECT id, slug, title, description, published, position
        FROM collections WHERE slug = ${slug}`
      if (collection === undefined) return Option.none()
      const items = yield* sql<Row>`SELECT p.name, i.position, i.note FROM collection_items i
        JOIN packages p ON p.id = i.package_id WHERE i.collection_id = ${collection.id}
        ORDER BY i.position, p.name`
      const state: CollectionState = {
        ...summaryOf(collection),
        published: bool(collection.published),
        position: int(collection.position),
        items: items.map((row) => ({
          packageName: text(row.name),
          position: int(row.position),
          note: textOrNull(row.note)
        }))
      }
      return Option.some(state)
    }).pipe(Effect.orDie)

  return CatalogStore.of({ categories, category, publishedCollections, publishedCollection, collectionState })
})

export const layer = Layer.effect(CatalogStore, make)
