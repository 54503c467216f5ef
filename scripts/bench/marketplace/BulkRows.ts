/**
 * The rows the product's importer writes for the synthetic catalogue (SqlCatalogImporter.ts `writePackages`,
 * SearchTerms.ts `writeTerms`: words and 3-letter prefixes), built here so a bulk loader can ship them without the importer's per-chunk
 * upserts: the same generator (seed 1), the same package and version ids (1, 2, … in import order, as the
 * identity columns hand them out to a fresh catalogue), the same JSON text, the same search rows.
 *
 * The importer decodes every package with the import schema first; that decode is most of the cost at a million
 * packages (about 180 µs each), and for this generator it changes nothing but the key order of the shared
 * per-version arrays, whose JSON is therefore taken from their decoded form once per array. Every 97th package
 * is also decoded in full and its rows compared with these, so a change to the schema or the generator that
 * would make the two differ stops the seeding.
 */
import { Schema } from "effect"
import { isDeepStrictEqual } from "node:util"
import { latestOf } from "../../../layers/marketplace/sql/SqlCatalogImporter.js"
import { prefixesOfPackage, termsOfPackage } from "../../../layers/marketplace/sql/SearchTerms.js"
import { ImportPackage, ImportVersion } from "../../../schema/marketplace/Import.js"
import { type ImportPackageInput, syntheticPackages } from "../../../src/marketplace/seed/Synthetic.js"

export type Value = string | number | boolean | null
export type TableRows = Array<ReadonlyArray<Value>>

/** Column lists per table, in the order of each row below. */
export const columns = {
  packages: [
    "id",
    "name",
    "display_name",
    "description",
    "keywords",
    "keywords_text",
    "publisher_id",
    "category_slug",
    "curation_status",
    "homepage",
    "repository_url",
    "license",
    "latest_version",
    "latest_published_at",
    "indexed_at",
    "created_at",
    "updated_at"
  ],
  package_terms: ["term", "tier", "name", "package_id"],
  package_prefixes: ["prefix", "tier", "name", "package_id"],
  package_versions: [
    "id",
    "package_id",
    "version",
    "published_at",
    "indexed_at",
    "registry_integrity",
    "tarball_sha512_verified",
    "has_provenance",
    "readme_html",
    "platforms",
    "facets",
    "permissions",
    "previews",
    "security_checks"
  ],
  package_facets: ["package_id", "kind", "isolation"],
  package_platforms: ["package_id", "platform"]
} as const

export type Table = keyof typeof columns
export const tables = Object.keys(columns) as ReadonlyArray<Table>

export type Chunk = Record<Table, TableRows>

export interface RowOptions {
  readonly dialect: "pg" | "sqlite"
  /** Publisher ids by slug, as the taxonomy import stored them. */
  readonly publisherIds: ReadonlyMap<string, number>
  /** `created_at` of every package (the importer's clock). */
  readonly timestamp: string
  /** The generator's `now` (every synthetic date is before it). */
  readonly now: Date
}

const decodePackage = Schema.decodeUnknownSync(ImportPackage)
const decodeVersion = Schema.decodeUnknownSync(ImportVersion)

type JsonField = "platforms" | "facets" | "permissions" | "previews" | "securityChecks"
const jsonFields: ReadonlyArray<JsonField> = ["platforms", "facets", "permissions", "previews", "securityChecks"]

/** The generator shares these arrays between packages: each is decoded (and written as JSON) once. */
const jsonCache = new Map<JsonField, WeakMap<object, string>>(jsonFields.map((field) => [field, new WeakMap()]))

const jsonOf = (field: JsonField, value: ReadonlyArray<unknown>): string => {
  const cache = jsonCache.get(field)!
  let json = cache.get(value)
  if (json === undefined) {
    const probe = { version: "1.0.0", publishedAt: "2000-01-01T00:00:00.000Z", indexedAt: "2000-01-01T00:00:00.000Z" }
    json = JSON.stringify(decodeVersion({ ...probe, registryIntegrity: "x", [field]: value })[field])
    cache.set(value, json)
  }
  return json
}

const flag = (dialect: RowOptions["dialect"], value: boolean): boolean | number => dialect === "pg" ? value : value ? 1 : 0

/**
 * The rows of one package (`id`) whose versions take ids from `versionId` on. `json` writes the per-version
 * arrays: cached from their decoded form for the generator's output, straight for an already decoded package.
 */
const rowsOf = (
  pkg: ImportPackage,
  id: number,
  versionId: number,
  options: RowOptions,
  json: (field: JsonField, value: ReadonlyArray<unknown>) => string,
  out: Chunk
) => {
  const latest = latestOf(pkg)
  out.packages.push([
    id,
    pkg.name,
    pkg.displayName,
    pkg.description,
    JSON.stringify(pkg.keywords),
    pkg.keywords.join(" "),
    pkg.publisher === null ? null : options.publisherIds.get(pkg.publisher) ?? null,
    pkg.categorySlug,
    pkg.curationStatus,
    pkg.homepage,
    pkg.repositoryUrl,
    pkg.license,
    latest?.version ?? null,
    latest?.publishedAt ?? "",
    latest?.indexedAt ?? null,
    options.timestamp,
    pkg.updatedAt ?? options.timestamp
  ])
  const terms = termsOfPackage(pkg)
  for (const { term, tier } of terms) out.package_terms.push([term, tier, pkg.name, id])
  for (const { prefix, tier } of prefixesOfPackage(terms)) out.package_prefixes.push([prefix, tier, pkg.name, id])
  let next = versionId
  for (const v of pkg.versions) {
    out.package_versions.push([
      next++,
      id,
      v.version,
      v.publishedAt,
      v.indexedAt,
      v.registryIntegrity,
      flag(options.dialect, v.tarballSha512Verified),
      flag(options.dialect, v.hasProvenance),
      v.readmeHtml,
      json("platforms", v.platforms),
      json("facets", v.facets),
      json("permissions", v.permissions),
      json("previews", v.previews),
      json("securityChecks", v.securityChecks)
    ])
  }
  if (latest !== undefined) {
    for (const facet of latest.facets) out.package_facets.push([id, facet.kind, facet.isolation])
    for (const platform of new Set(latest.platforms)) out.package_platforms.push([id, platform])
  }
  return next
}

const emptyChunk = (): Chunk => ({
  packages: [],
  package_terms: [],
  package_prefixes: [],
  package_versions: [],
  package_facets: [],
  package_platforms: []
})

/** Every 97th package is decoded in full and must give the very rows of the fast path. */
const checkEvery = 97

/**
 * The rows of synthetic packages `start` .. `start + count - 1`, the first taking `packageId` and its first
 * version `versionId`; returns the ids the next chunk starts from.
 */
export const chunkRows = (
  start: number,
  count: number,
  ids: { readonly packageId: number; readonly versionId: number },
  options: RowOptions
) => {
  const out = emptyChunk()
  const packages = syntheticPackages({ seed: 1, start, count, now: options.now })
  let versionId = ids.versionId
  packages.forEach((raw: ImportPackageInput, k) => {
    const id = ids.packageId + k
    // Every field the rows read is present in the generator's output, in its decoded form but for key order.
    const next = rowsOf(raw as unknown as ImportPackage, id, versionId, options, jsonOf, out)
    if ((start + k) % checkEvery === 0) {
      const fast = emptyChunk()
      const decoded = emptyChunk()
      rowsOf(raw as unknown as ImportPackage, id, versionId, options, jsonOf, fast)
      rowsOf(decodePackage(raw), id, versionId, options, (_, value) => JSON.stringify(value), decoded)
      if (!isDeepStrictEqual(fast, decoded)) {
        throw new Error(`bulk rows of synthetic package ${start + k} differ from the importer's:\n` +
          `${JSON.stringify(fast).slice(0, 800)}\n${JSON.stringify(decoded).slice(0, 800)}`)
      }
    }
    versionId = next
  })
  return { rows: out, next: { packageId: ids.packageId + packages.length, versionId } }
}
