/**
 * The rules of GET /packages and GET /search: visibility, default sort,
 * full-text terms and cursor binding. Handlers call these; stores only run
 * the resulting query.
 */
import { Either } from "effect"
import type { ListParams, Sort } from "../../schema/marketplace/Package.js"
import { publicStatuses } from "../../schema/marketplace/Package.js"
import * as Cursor from "./Cursor.js"
import type { Keyset, PackageQuery } from "./PackageStore.js"

export const defaultLimit = 20

/** At most this many terms reach the full-text index. */
const maxTerms = 16

// Any code unit above 0x7f (a surrogate half included: no u flag).
const nonAscii = /[\u0080-\uffff]/

const isAscii = (text: string) => !nonAscii.test(text)

/**
 * Words of a query: runs of letters and digits, lowercased, accents folded (the index is built the same way).
 * ASCII text, nearly every query, skips the Unicode passes: NFKD leaves it as it is, it holds no combining
 * mark, and its letters and digits are [A-Za-z0-9].
 */
export const termsOf = (q: string | undefined): ReadonlyArray<string> =>
  (isAscii(q ?? "")
    ? (q ?? "").toLowerCase().split(/[^a-z0-9]+/)
    : (q ?? "")
      .normalize("NFKD")
      .replace(/\p{M}+/gu, "")
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u))
    .filter((term) => term.length > 0)
    .slice(0, maxTerms)

/** `relevance` when there is text to rank, else `latest`; relevance without text browses by `latest`. */
export const effectiveSort = (sort: Sort | undefined, terms: ReadonlyArray<string>): Sort =>
  terms.length === 0 ? (sort === "relevance" || sort === undefined ? "latest" : sort) : (sort ?? "relevance")

export interface Plan {
  readonly query: PackageQuery
  readonly binding: string
}

export type PlanProblem = { readonly parameter: "cursor"; readonly problem: Cursor.CursorProblem }

export const plan = (params: ListParams, route: "packages" | "search"): Either.Either<Plan, PlanProblem> => {
  const terms = termsOf(params.q)
  const ordering = effectiveSort(params.sort, terms)
  const binding = Cursor.fingerprint({
    route,
    terms: terms.join(" "),
    sort: ordering,
    category: params.category,
    kind: params.kind,
    isolation: params.isolation,
    platform: params.platform,
    publisher: params.publisher,
    curation: params.curation
  })
  const after: Either.Either<Keyset | undefined, Cursor.CursorProblem> = params.cursor === undefined
    ? Either.right(undefined)
    : Cursor.decode(params.cursor, binding)
  return after.pipe(
    Either.mapLeft((problem): PlanProblem => ({ parameter: "cursor", problem })),
    Either.map((after) => ({
      binding,
      query: {
        terms,
        ordering,
        category: params.category,
        kind: params.kind,
        isolation: params.isolation,
        platform: params.platform,
        publisher: params.publisher,
        statuses: params.curation === undefined ? publicStatuses : [params.curation],
        limit: params.limit ?? defaultLimit,
        after
      }
    }))
  )
}
