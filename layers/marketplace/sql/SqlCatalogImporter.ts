/**
 * CatalogImporter on SQLite or PostgreSQL: validates cross references, then
 * writes in multi-row statements inside one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Array as Arr, Clock, DateTime, Effect, Layer } from "effect"
import type {
  ImportDocument,
  ImportPackage,
  ImportPublisher,
  ImportVersion
} from "../../../schema/marketplace/Import.js"
import type { PublisherRole } from "../../../services/marketplace/Accounts.js"
import {
  CatalogImporter,
  type ImportCounts,
  ImportRejected
} from "../../../services/marketplace/CatalogImporter.js"
import { makeId } from "../../../services/common/Ids.js"
import { flag, int, type Row, text } from "./Rows.js"
import { writeTerms } from "./SearchTerms.js"

/** Rows per statement: well under both dialects' bound-parameter limits. */
const batch = 400

const reject = (path: string, message: string) => Effect.fail(new ImportRejected({ path, message }))

const duplicates = <A>(items: ReadonlyArray<A>, key: (a: A) => string, path: (i: number) => string) =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    for (const [i, item] of items.entries()) {
      const k = key(item)
      if (seen.has(k)) return yield* reject(path(i), `duplicate ${JSON.stringify(k)}`)
      seen.add(k)
    }
  })

/** The version a package points to as latest: the named one, else the newest published. */
export const latestOf = (pkg: ImportPackage): ImportVersion | undefined =>
  pkg.latestVersion !== undefined
    ? pkg.versions.find((v) => v.version === pkg.latestVersion)
    : pkg.versions.reduce<ImportVersion | undefined>(
      (newest, v) => (newest === undefined || v.publishedAt > newest.publishedAt ? v : newest),
      undefined
    )

interface Membership {
  readonly slug: string
  /** Lower-cased, as `users.email` is stored. */
  readonly email: string
  readonly role: PublisherRole
  readonly path: string
}

/** Every membership the publishers list, with the path that names it. */
const membershipsOf = (publishers: ReadonlyArray<ImportPublisher>): ReadonlyArray<Membership> =>
  publishers.flatMap((publisher, i) => {
    const listed = (emails: ReadonlyArray<string>, role: PublisherRole, field: "owners" | "members") =>
      emails.map((email, j) => ({
        slug: publisher.slug,
        email: email.toLowerCase(),
        role,
        path: `publishers[${i}].${field}[${j}]`
      }))
    return [...listed(publisher.owners, "owner", "owners"), ...listed(publisher.members, "member", "members")]
  })

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const dialect = sql.onDialectOrElse({ pg: () => "pg" as const, orElse: () => "sqlite" as const })
  const now = Clock.currentTimeMillis.pipe(Effect.map((ms) => DateTime.formatIso(DateTime.unsafeMake(ms))))

  const lookup = (table: "publishers" | "categories", column: "id" | "slug", slugs: ReadonlyArray<string>) =>
    Effect.forEach(Arr.chunksOf(Arr.dedupe(slugs), batch), (chunk) =>
      sql<Row>`SELECT slug, ${sql(column)} AS value FROM ${sql(table)} WHERE ${sql.in("slug", chunk)}`, {
      concurrency: 1
    }).pipe(Effect.map((chunks) => new Map(chunks.flat().map((row) => [text(row.slug), row.value]))))

  const writePackages = (packages: ReadonlyArray<ImportPackage>, prefix: string) =>
    Effect.gen(function*() {
      yield* duplicates(packages, (p) => p.name, (i) => `${prefix}[${i}].name`)
      for (const [i, pkg] of packages.entries()) {
        yield* duplicates(pkg.versions, (v) => v.version, (j) => `${prefix}[${i}].versions[${j}].version`)
        if (pkg.latestVersion !== undefined && latestOf(pkg) === undefined) {
          yield* reject(`${prefix}[${i}].latestVersion`, `no version ${pkg.latestVersion} in versions`)
        }
      }
      const publishers = yield* lookup("publishers", "id", packages.flatMap((p) => (p.publisher ? [p.publisher] : [])))
      const categories = yield* lookup(
        "categories",
        "slug",
        packages.flatMap((p) => (p.categorySlug ? [p.categorySlug] : []))
      )
      for (const [i, pkg] of packages.entries()) {
        if (pkg.publisher !== null && !publishers.has(pkg.publisher)) {
          yield* reject(`${prefix}[${i}].publisher`, `unknown publisher ${JSON.stringify(pkg.publisher)}`)
        }
        if (pkg.categorySlug !== null && !categories.has(pkg.categorySlug)) {
          yield* reject(`${prefix}[${i}].categorySlug`, `unknown category ${JSON.stringify(pkg.categorySlug)}`)
        }
      }

      const timestamp = yield* now
      const rows = packages.map((pkg) => {
        const latest = latestOf(pkg)
        return {
          name: pkg.name,
          displayName: pkg.displayName,
          description: pkg.description,
          keywords: JSON.stringify(pkg.keywords),
          keywordsText: pkg.keywords.join(" "),
          publisherId: pkg.publisher === null ? null : int(publishers.get(pkg.publisher)),
          categorySlug: pkg.categorySlug,
          curationStatus: pkg.curationStatus,
          homepage: pkg.homepage,
          repositoryUrl: pkg.repositoryUrl,
          license: pkg.license,
          latestVersion: latest?.version ?? null,
          latestPublishedAt: latest?.publishedAt ?? "",
          indexedAt: latest?.indexedAt ?? null,
          createdAt: timestamp,
          updatedAt: pkg.updatedAt ?? timestamp
        }
      })
      const ids = new Map<string, number>()
      for (const chunk of Arr.chunksOf(rows, batch)) {
        const inserted = yield* sql<Row>`INSERT INTO packages ${sql.insert(chunk)}
          ON CONFLICT (name) DO UPDATE SET display_name = excluded.display_name,
            description = excluded.description, keywords = excluded.keywords,
            keywords_text = excluded.keywords_text, publisher_id = excluded.publisher_id,
            category_slug = excluded.category_slug, curation_status = excluded.curation_status,
            homepage = excluded.homepage, repository_url = excluded.repository_url, license = excluded.license,
            latest_version = excluded.latest_version,
            latest_published_at = excluded.latest_published_at, indexed_at = excluded.indexed_at,
            updated_at = excluded.updated_at
          RETURNING id, name`
        for (const row of inserted) ids.set(text(row.name), int(row.id))
      }
      // The search rows change with their package, in this transaction.
      yield* writeTerms(sql, packages.map((pkg) => ({ ...pkg, id: ids.get(pkg.name)! })))
      const packageIds = [...ids.values()]
      for (const chunk of Arr.chunksOf(packageIds, batch)) {
        yield* sql`DELETE FROM package_versions WHERE ${sql.in("package_id", chunk)}`
        yield* sql`DELETE FROM package_facets WHERE ${sql.in("package_id", chunk)}`
        yield* sql`DELETE FROM package_platforms WHERE ${sql.in("package_id", chunk)}`
      }

      const versionRows = packages.flatMap((pkg) =>
        pkg.versions.map((v) => ({
          packageId: ids.get(pkg.name)!,
          version: v.version,
          publishedAt: v.publishedAt,
          indexedAt: v.indexedAt,
          registryIntegrity: v.registryIntegrity,
          tarballSha512Verified: flag(dialect, v.tarballSha512Verified),
          hasProvenance: flag(dialect, v.hasProvenance),
          readmeHtml: v.readmeHtml,
          platforms: JSON.stringify(v.platforms),
          facets: JSON.stringify(v.facets),
          permissions: JSON.stringify(v.permissions),
          previews: JSON.stringify(v.previews),
          securityChecks: JSON.stringify(v.securityChecks)
        }))
      )
      for (const chunk of Arr.chunksOf(versionRows, batch)) yield* sql`INSERT INTO package_versions ${sql.insert(chunk)}`

      // Filters look at the latest version only, so only its facets and platforms are kept for them.
      const latest = packages.flatMap((pkg) => {
        const version = latestOf(pkg)
        return version === undefined ? [] : [{ packageId: ids.get(pkg.name)!, version }]
      })
      const facetRows = latest.flatMap(({ packageId, version }) =>
        version.facets.map((facet) => ({ packageId, kind: facet.kind, isolation: facet.isolation }))
      )
      const platformRows = latest.flatMap(({ packageId, version }) =>
        Arr.dedupe(version.platforms).map((platform) => ({ packageId, platform }))
      )
      for (const chunk of Arr.chunksOf(facetRows, batch)) yield* sql`INSERT INTO package_facets ${sql.insert(chunk)}`
      for (const chunk of Arr.chunksOf(platformRows, batch)) {
        yield* sql`INSERT INTO package_platforms ${sql.insert(chunk)}`
      }
      return { packages: packages.length, versions: versionRows.length }
    })

  const writeCollections = (document: ImportDocument) =>
    Effect.gen(function*() {
      yield* duplicates(document.collections, (c) => c.slug, (i) => `collections[${i}].slug`)
      const timestamp = yield* now
      for (const [i, collection] of document.collections.entries()) {
        yield* duplicates(collection.items, (item) => item.packageName, (j) => `collections[${i}].items[${j}].packageName`)
        const [row] = yield* sql<Row>`INSERT INTO collections ${
          sql.insert({
            slug: collection.slug,
            title: collection.title,
            description: collection.description,
            published: flag(dialect, collection.published),
            position: collection.position,
            createdAt: timestamp,
            updatedAt: timestamp
          })
        } ON CONFLICT (slug) DO UPDATE SET title = excluded.title, description = excluded.description,
            published = excluded.published, position = excluded.position, updated_at = excluded.updated_at
          RETURNING id`
        const collectionId = int(row!.id)
        yield* sql`DELETE FROM collection_items WHERE collection_id = ${collectionId}`
        if (collection.items.length === 0) continue
        const found = yield* sql<Row>`SELECT id, name FROM packages
          WHERE ${sql.in("name", collection.items.map((item) => item.packageName))}`
        const packageIds = new Map(found.map((r) => [text(r.name), int(r.id)]))
        const items = []
        for (const [j, item] of collection.items.entries()) {
          const packageId = packageIds.get(item.packageName)
          if (packageId === undefined) {
            return yield* reject(
              `collections[${i}].items[${j}].packageName`,
              `unknown package ${JSON.stringify(item.packageName)}`
            )
          }
          items.push({ collectionId, packageId, position: j, note: item.note })
        }
        yield* sql`INSERT INTO collection_items ${sql.insert(items)}`
      }
    })

  const writePages = (document: ImportDocument) =>
    Effect.gen(function*() {
      yield* duplicates(document.pages, (p) => p.slug, (i) => `pages[${i}].slug`)
      const timestamp = yield* now
      for (const page of document.pages) {
        const [existing] = yield* sql<Row>`SELECT id FROM pages WHERE slug = ${page.slug}`
        const pageId = existing === undefined ? yield* makeId("pg") : text(existing.id)
        if (existing === undefined) {
          yield* sql`INSERT INTO pages ${
            sql.insert({ id: pageId, slug: page.slug, kind: page.kind, title: page.title, createdAt: timestamp, updatedAt: timestamp })
          }`
        } else {
          yield* sql`UPDATE pages SET kind = ${page.kind}, title = ${page.title}, published_revision_id = NULL,
            updated_at = ${timestamp} WHERE id = ${pageId}`
          yield* sql`DELETE FROM page_revisions WHERE page_id = ${pageId}`
        }
        let publishedId: string | null = null
        for (const [n, revision] of page.revisions.entries()) {
          const revisionId = yield* makeId("rev")
          yield* sql`INSERT INTO page_revisions ${
            sql.insert({
              id: revisionId,
              pageId,
              number: n + 1,
              document: JSON.stringify(revision.document),
              createdAt: revision.createdAt ?? revision.publishedAt ?? timestamp,
              publishedAt: revision.publishedAt
            })
          }`
          if (revision.publishedAt !== null) publishedId = revisionId
        }
        yield* sql`UPDATE pages SET published_revision_id = ${publishedId} WHERE id = ${pageId}`
      }
    })

  const upsertTaxonomy = (document: ImportDocument) =>
    Effect.gen(function*() {
      yield* duplicates(document.categories, (c) => c.slug, (i) => `categories[${i}].slug`)
      yield* duplicates(document.publishers, (p) => p.slug, (i) => `publishers[${i}].slug`)
      const timestamp = yield* now
      for (const chunk of Arr.chunksOf(document.categories, batch)) {
        yield* sql`INSERT INTO categories ${sql.insert(chunk.map((c) => ({ ...c })))}
          ON CONFLICT (slug) DO UPDATE SET name = excluded.name, description = excluded.description,
            position = excluded.position`
      }
      for (const chunk of Arr.chunksOf(document.publishers, batch)) {
        yield* sql`INSERT INTO publishers ${
          sql.insert(chunk.map((p) => ({ slug: p.slug, name: p.name, verified: flag(dialect, p.verified), createdAt: timestamp })))
        } ON CONFLICT (slug) DO UPDATE SET name = excluded.name, verified = excluded.verified`
      }
    })

  const userIds = (emails: ReadonlyArray<string>) =>
    Effect.forEach(Arr.chunksOf(Arr.dedupe(emails), batch), (chunk) =>
      sql<Row>`SELECT id, email FROM users WHERE ${sql.in("email", chunk)}`, {
      concurrency: 1
    }).pipe(Effect.map((chunks) => new Map(chunks.flat().map((row) => [text(row.email), text(row.id)]))))

  /** Adds listed accounts to their publishers or changes their role; memberships not listed stay. */
  const writeMemberships = (publishers: ReadonlyArray<ImportPublisher>) =>
    Effect.gen(function*() {
      const memberships = membershipsOf(publishers)
      if (memberships.length === 0) return
      // One row per account and publisher: listing an account twice (as owner and member, say) is ambiguous.
      const seen = new Set<string>()
      for (const m of memberships) {
        const key = `${m.slug}\n${m.email}`
        if (seen.has(key)) return yield* reject(m.path, `${JSON.stringify(m.email)} is listed twice for this publisher`)
        seen.add(key)
      }
      const users = yield* userIds(memberships.map((m) => m.email))
      for (const m of memberships) {
        if (!users.has(m.email)) yield* reject(m.path, `no account with the email ${JSON.stringify(m.email)}`)
      }
      const publisherIds = yield* lookup("publishers", "id", memberships.map((m) => m.slug))
      const timestamp = yield* now
      const rows = memberships.map((m) => ({
        publisherId: int(publisherIds.get(m.slug)),
        userId: users.get(m.email)!,
        role: m.role,
        createdAt: timestamp
      }))
      for (const chunk of Arr.chunksOf(rows, batch)) {
        yield* sql`INSERT INTO publisher_members ${sql.insert(chunk)}
          ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role`
      }
    })

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql.withTransaction(effect).pipe(
      Effect.catchTag("SqlError", (error) => Effect.die(error))
    )

  const load: CatalogImporter["Type"]["load"] = (document) =>
    transaction(Effect.gen(function*() {
      yield* upsertTaxonomy(document)
      yield* writeMemberships(document.publishers)
      const written = yield* writePackages(document.packages, "packages")
      yield* writeCollections(document)
      yield* writePages(document)
      const counts: ImportCounts = {
        categories: document.categories.length,
        publishers: document.publishers.length,
        packages: written.packages,
        versions: written.versions,
        collections: document.collections.length,
        pages: document.pages.length
      }
      return counts
    }))

  const loadPackages: CatalogImporter["Type"]["loadPackages"] = (packages, prefix = "packages") =>
    transaction(writePackages(packages, prefix))

  const isEmpty = sql<Row>`SELECT COUNT(*) AS count FROM packages`.pipe(
    Effect.map(([row]) => int(row?.count) === 0),
    Effect.orDie
  )

  // VACUUM also marks pages all-visible, so counts can be answered from indexes alone.
  const refreshStatistics = sql.onDialectOrElse({
    pg: () =>
      sql`VACUUM (ANALYZE) packages, package_terms, package_prefixes, package_versions, package_facets,
      package_platforms, collection_items`,
    orElse: () => sql`ANALYZE`
  }).pipe(Effect.asVoid, Effect.orDie)

  return CatalogImporter.of({ load, loadPackages, isEmpty, refreshStatistics })
})

export const layer = Layer.effect(CatalogImporter, make)
