/**
 * IndexedCatalog on SQLite or PostgreSQL. A version is written by reading the package as the catalogue holds
 * it (every version, its curation status, publisher and category), adding the new version and handing the
 * whole package to the catalogue importer, inside one transaction. On PostgreSQL a transaction-scoped
 * advisory lock on the package's name keeps two replicas indexing two versions of one package from each
 * writing the package without the other's version; SQLite has one writer already.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import type { ImportPackage, ImportVersion } from "../../../schema/marketplace/Import.js"
import { CurationStatus, Facet, Permission, Preview, SecurityCheck } from "../../../schema/marketplace/Package.js"
import { CatalogImporter } from "../../../services/marketplace/CatalogImporter.js"
import { IndexedCatalog } from "../../../services/marketplace/IndexedCatalog.js"
import { bool } from "./Rows.js"

const Flag = Schema.transform(Schema.Union(Schema.Boolean, Schema.Number, Schema.String), Schema.Boolean, {
  strict: true,
  decode: bool,
  encode: (b) => b
})
const JsonOf = <A, I>(schema: Schema.Schema<A, I>) => Schema.parseJson(schema)

const PackageRow = Schema.Struct({
  name: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  keywords: JsonOf(Schema.Array(Schema.String)),
  publisherSlug: Schema.NullOr(Schema.String),
  categorySlug: Schema.NullOr(Schema.String),
  curationStatus: CurationStatus,
  homepage: Schema.NullOr(Schema.String),
  repositoryUrl: Schema.NullOr(Schema.String),
  license: Schema.NullOr(Schema.String)
})

const VersionRow = Schema.Struct({
  version: Schema.String,
  publishedAt: Schema.String,
  indexedAt: Schema.String,
  registryIntegrity: Schema.String,
  tarballSha512Verified: Flag,
  hasProvenance: Flag,
  readmeHtml: Schema.NullOr(Schema.String),
  platforms: JsonOf(Schema.Array(Schema.String)),
  facets: JsonOf(Schema.Array(Facet)),
  permissions: JsonOf(Schema.Array(Permission)),
  previews: JsonOf(Schema.Array(Preview)),
  securityChecks: JsonOf(Schema.Array(SecurityCheck))
})

const decodePackages = Schema.decodeUnknown(Schema.Array(PackageRow))
const decodeVersions = Schema.decodeUnknown(Schema.Array(VersionRow))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const importer = yield* CatalogImporter

  const lock = (name: string) =>
    sql.onDialectOrElse({
      pg: () => sql`SELECT pg_advisory_xact_lock(hashtext(${`clark-index:${name}`}))`,
      orElse: () => sql`SELECT 1`
    })

  // PostgreSQL: the catalogue-version row is bumped once, as the transaction's last statement (migration 0014),
  // so concurrent workers do not queue on that one row for the whole of each other's writes.
  const deferBump = sql.onDialectOrElse({
    pg: () => sql`SELECT set_config('clark.catalog_bump', 'deferred', true)`,
    orElse: () => Effect.void
  })
  const bump = sql.onDialectOrElse({
    pg: () => sql`UPDATE catalog_version SET version = version + 1 WHERE id = 1`,
    orElse: () => Effect.void
  })

  const indexedIntegrity: IndexedCatalog["Type"]["indexedIntegrity"] = (name, version) =>
    sql<{ readonly registryIntegrity: string }>`SELECT v.registry_integrity FROM package_versions v
      JOIN packages p ON p.id = v.package_id WHERE p.name = ${name} AND v.version = ${version}`.pipe(
      Effect.map(([row]) => row?.registryIntegrity),
      Effect.orDie
    )

  const namesNear: IndexedCatalog["Type"]["namesNear"] = (name) => {
    const length = name.replace(/^@[^/]+\//, "").length
    // Scoped names are compared without their scope, so their length is not the column's: those are kept.
    return sql<{ readonly name: string }>`SELECT name FROM packages
      WHERE name <> ${name} AND (name LIKE '@%' OR LENGTH(name) BETWEEN ${length - 2} AND ${length + 2})
      LIMIT 20000`.pipe(Effect.map((rows) => rows.map((row) => row.name)), Effect.orDie)
  }

  const write: IndexedCatalog["Type"]["write"] = (entry) =>
    Effect.gen(function*() {
      yield* lock(entry.name)
      yield* deferBump
      const [existing] = yield* sql`SELECT p.name, p.display_name, p.description, p.keywords, pub.slug AS publisher_slug,
          p.category_slug, p.curation_status, p.homepage, p.repository_url, p.license
        FROM packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id WHERE p.name = ${entry.name}`.pipe(
        Effect.flatMap(decodePackages)
      )
      const versions: ReadonlyArray<ImportVersion> = existing === undefined ? [] : yield* sql`SELECT v.version,
          v.published_at, v.indexed_at, v.registry_integrity, v.tarball_sha512_verified, v.has_provenance, v.readme_html,
          v.platforms, v.facets, v.permissions, v.previews, v.security_checks
        FROM package_versions v JOIN packages p ON p.id = v.package_id WHERE p.name = ${entry.name}`.pipe(
        Effect.flatMap(decodeVersions)
      )
      const pkg: ImportPackage = {
        name: entry.name,
        // The listing describes the package as the version indexed last does; the curators' fields stay.
        displayName: entry.displayName,
        description: entry.description,
        keywords: entry.keywords,
        homepage: entry.homepage,
        repositoryUrl: entry.repositoryUrl,
        license: entry.license,
        publisher: existing?.publisherSlug ?? null,
        categorySlug: existing?.categorySlug ?? null,
        curationStatus: existing?.curationStatus ?? entry.initialStatus,
        versions: [...versions.filter((v) => v.version !== entry.version.version), entry.version]
      }
      yield* importer.loadPackages([pkg], "indexed")
      yield* bump
    }).pipe(
      sql.withTransaction,
      // A write the importer refuses (an inconsistent catalogue) or a database failure is the server's fault.
      Effect.catchAll((error) => Effect.die(error)),
      Effect.withSpan("IndexedCatalog.write", { attributes: { name: entry.name } })
    )

  return IndexedCatalog.of({ indexedIntegrity, namesNear, write })
})

export const layer = Layer.effect(IndexedCatalog, make)
