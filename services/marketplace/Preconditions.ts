/**
 * Optimistic concurrency for the page builder: a page's version travels as a
 * strong entity tag (`"7"`), and a write names the version it was based on in
 * `If-Match` (RFC 9110 §13.1.1).
 */

/** The entity tag of a version. */
export const etag = (version: number): string => `"${version}"`

export type Precondition =
  | { readonly _tag: "Missing" }
  /** Every tag the header lists, as versions; `*` is not accepted, so it yields no version. */
  | { readonly _tag: "Versions"; readonly versions: ReadonlyArray<number> }

const tag = /^"([1-9][0-9]{0,14})"$/

/**
 * The versions an `If-Match` header names. Weak tags (`W/"7"`) never match
 * (If-Match compares strongly), `*` would let a client skip the check, and
 * anything unreadable names nothing: all of those can only fail with 412.
 */
export const parseIfMatch = (header: string | undefined): Precondition => {
  if (header === undefined || header.trim() === "") return { _tag: "Missing" }
  const versions = header.split(",").flatMap((part) => {
    const match = tag.exec(part.trim())
    return match === null ? [] : [Number(match[1])]
  })
  return { _tag: "Versions", versions }
}

/** The version a write may proceed from: the one the header names that is current, if any. */
export const matches = (precondition: Precondition, current: number): boolean =>
  precondition._tag === "Versions" && precondition.versions.includes(current)
