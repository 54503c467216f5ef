/**
 * The search table's rows: every distinct word of a package with the best field it appears in (its tier),
 * and the relevance score of a tier. The score depends on the package's own text and the query only, never
 * on other packages (bm25's corpus statistics moved with every import, so a relevance cursor resumed in the
 * wrong place), and a tier walk in (tier, name) order is what an index can give without ranking every match.
 */
import type { SqlClient } from "@effect/sql"
import { Array as Arr, Effect } from "effect"

/** name > displayName > keywords > description, as the full-text weights were. */
export const tiers = { name: 1, displayName: 2, keywords: 3, description: 4 } as const
export type Tier = 1 | 2 | 3 | 4

/** The score a word earns in a tier; a query's score is the sum over its words. Higher is better. */
export const weightOf = (tier: number): number => (tier === 1 ? 8 : tier === 2 ? 4 : tier === 3 ? 2 : tier === 4 ? 1 : 0)

/** The best tier a single-word score could come from (a cursor carries the score). */
export const tierOfScore = (score: number): number => (score >= 8 ? 1 : score >= 4 ? 2 : score >= 2 ? 3 : score >= 1 ? 4 : 5)

/**
 * Words of a text, normalised exactly like query terms (services/marketplace/Listing.ts `termsOf`): NFKD,
 * marks removed, lower case, runs of letters and digits. Both dialects read these rows, so both match alike.
 */
export const wordsOf = (text: string): ReadonlyArray<string> =>
  text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

export interface SearchableText {
  readonly name: string
  readonly displayName: string
  readonly keywords: ReadonlyArray<string>
  readonly description: string
}

export interface TermRow {
  readonly term: string
  readonly tier: Tier
}

/** One row per distinct word, at the best tier it appears in. */
export const termsOfPackage = (pkg: SearchableText): ReadonlyArray<TermRow> => {
  const best = new Map<string, Tier>()
  const add = (text: string, tier: Tier) => {
    for (const word of wordsOf(text)) if (!best.has(word)) best.set(word, tier)
  }
  add(pkg.name, tiers.name)
  add(pkg.displayName, tiers.displayName)
  add(pkg.keywords.join(" "), tiers.keywords)
  add(pkg.description, tiers.description)
  return [...best].map(([term, tier]) => ({ term, tier }))
}

/** The length, in code points, of the prefixes kept in `package_prefixes` (migration 0009). */
export const prefixLength = 3

/** A query word answered from `package_prefixes`: exactly `prefixLength` code points. */
export const isStoredPrefix = (term: string): boolean => [...term].length === prefixLength

export interface PrefixRow {
  readonly prefix: string
  readonly tier: Tier
}

/**
 * One row per distinct 3-code-point start of the package's words, at the best tier of the words that start
 * so: a 3-letter query's score for the package, found by one walk instead of one per matching word.
 */
export const prefixesOfPackage = (terms: ReadonlyArray<TermRow>): ReadonlyArray<PrefixRow> => {
  const best = new Map<string, Tier>()
  for (const { term, tier } of terms) {
    const points = [...term]
    if (points.length < prefixLength) continue
    const prefix = points.slice(0, prefixLength).join("")
    const known = best.get(prefix)
    if (known === undefined || tier < known) best.set(prefix, tier)
  }
  return [...best].map(([prefix, tier]) => ({ prefix, tier }))
}

/**
 * The range of words starting with `prefix` in byte order (PostgreSQL `COLLATE "C"`, SQLite BINARY): from the
 * prefix to the prefix with its last code point moved one up. Terms are letters and digits, never surrogates.
 */
export const prefixRange = (prefix: string): { readonly from: string; readonly to: string } => {
  const points = [...prefix]
  const last = points.pop()!.codePointAt(0)!
  const next = last === 0xd7ff ? 0xe000 : last + 1
  return { from: prefix, to: points.join("") + String.fromCodePoint(next) }
}

/** Rows per statement: 4 parameters each, well under both dialects' bound-parameter limits. */
const batch = 2000

/** The rows of `package_terms` for the given packages, removing their old ones (migration 0008 writes these only). */
export const writeWords = (sql: SqlClient.SqlClient, packages: ReadonlyArray<SearchableText & { readonly id: number }>) =>
  Effect.gen(function*() {
    for (const chunk of Arr.chunksOf(packages.map((p) => p.id), 500)) {
      yield* sql`DELETE FROM package_terms WHERE ${sql.in("package_id", chunk)}`
    }
    const rows = packages.flatMap((pkg) =>
      termsOfPackage(pkg).map(({ term, tier }) => ({ term, tier, name: pkg.name, package_id: pkg.id }))
    )
    for (const chunk of Arr.chunksOf(rows, batch)) {
      yield* sql`INSERT INTO package_terms ${sql.insert(chunk)}`
    }
  })

/**
 * Replaces the search rows of the given packages: their words and their 3-letter prefixes. Runs inside the
 * caller's transaction (the importer's), so a package and its search rows change together.
 */
export const writeTerms = (sql: SqlClient.SqlClient, packages: ReadonlyArray<SearchableText & { readonly id: number }>) =>
  Effect.gen(function*() {
    yield* writeWords(sql, packages)
    for (const chunk of Arr.chunksOf(packages.map((p) => p.id), 500)) {
      yield* sql`DELETE FROM package_prefixes WHERE ${sql.in("package_id", chunk)}`
    }
    const rows = packages.flatMap((pkg) =>
      prefixesOfPackage(termsOfPackage(pkg)).map(({ prefix, tier }) => ({ prefix, tier, name: pkg.name, package_id: pkg.id }))
    )
    for (const chunk of Arr.chunksOf(rows, batch)) {
      yield* sql`INSERT INTO package_prefixes ${sql.insert(chunk)}`
    }
  })
