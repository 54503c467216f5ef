/**
 * Reading rows the same way from both dialects: PostgreSQL returns BIGINT and
 * COUNT as strings and booleans as booleans, SQLite returns numbers for both.
 */
import type { CurationStatus, PackageSummary } from "../../../schema/marketplace/Package.js"

export type Row = Record<string, unknown>

export const bool = (value: unknown): boolean => value === true || value === 1 || value === "1" || value === "t"
export const int = (value: unknown): number => (typeof value === "number" ? value : Number(value))
export const text = (value: unknown): string => (typeof value === "string" ? value : String(value))
export const textOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : text(value))
export const json = <A>(value: unknown): A => JSON.parse(text(value)) as A

/** Columns of a package summary; `p` is packages, `pub` the joined publisher. */
export const summaryColumns = `p.id, p.name, p.display_name, p.description, p.latest_version, p.category_slug,
  p.curation_status, p.keywords, p.indexed_at, p.updated_at, p.latest_published_at,
  pub.slug AS publisher_slug, pub.name AS publisher_name, pub.verified AS publisher_verified`

export const summaryFrom = `packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id`

/**
 * A summary from a row of `summaryColumns` read with `sql.withoutTransforms()`:
 * the column names as the database returns them (snake_case). The hot read
 * paths skip the client's snake_case → camelCase row copy, which cost more CPU
 * than the rest of reading a 21-row page.
 */
export const toSummary = (row: Row): PackageSummary => ({
  name: text(row.name),
  displayName: text(row.display_name),
  description: text(row.description),
  latestVersion: textOrNull(row.latest_version),
  publisher: row.publisher_slug === null || row.publisher_slug === undefined
    ? null
    : { slug: text(row.publisher_slug), name: text(row.publisher_name), verified: bool(row.publisher_verified) },
  categorySlug: textOrNull(row.category_slug),
  curationStatus: text(row.curation_status) as CurationStatus,
  keywords: json<Array<string>>(row.keywords),
  indexedAt: textOrNull(row.indexed_at),
  updatedAt: text(row.updated_at)
})

/** A row read positionally (a statement's `.values`), its columns in the statement's order. */
export type Values = ReadonlyArray<unknown>

/**
 * Positions in a row of `summaryColumns` read with `.values`; a page's statements put their tier (or score, or
 * walked-word count) after them, at `summaryWidth` and on. Pages are read as arrays, not objects: better-sqlite3
 * builds each row object property by property, which cost a third of a 3-letter page's statement
 * (docs/decisions.md, "Search pages read as arrays").
 */
export const summaryAt = { id: 0, latestPublishedAt: 10 } as const
export const summaryWidth = 14

/** `toSummary` of a row of `summaryColumns` read with `.values`. */
export const summaryOf = (row: Values): PackageSummary => ({
  name: text(row[1]),
  displayName: text(row[2]),
  description: text(row[3]),
  latestVersion: textOrNull(row[4]),
  publisher: row[11] === null || row[11] === undefined
    ? null
    : { slug: text(row[11]), name: text(row[12]), verified: bool(row[13]) },
  categorySlug: textOrNull(row[5]),
  curationStatus: text(row[6]) as CurationStatus,
  keywords: json<Array<string>>(row[7]),
  indexedAt: textOrNull(row[8]),
  updatedAt: text(row[9])
})

/** A boolean as the dialect binds it: better-sqlite3 binds no booleans. */
export const flag = (dialect: "pg" | "sqlite", value: boolean): boolean | number =>
  dialect === "pg" ? value : value ? 1 : 0

const statusLiterals: Record<CurationStatus, string> = {
  unreviewed: "'unreviewed'",
  listed: "'listed'",
  featured: "'featured'",
  hidden: "'hidden'",
  rejected: "'rejected'"
}

/**
 * `curation_status IN (...)` with the statuses written as literals, not
 * parameters: planners match partial indexes only against constants. Each
 * literal comes from this closed table, never from input.
 */
export const statusIn = (column: string, statuses: ReadonlyArray<CurationStatus>): string =>
  statuses.length === 0 ? "1 = 0" : `${column} IN (${statuses.map((status) => statusLiterals[status]).join(", ")})`
