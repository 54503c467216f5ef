/**
 * The request target's percent-encoding, checked before routing. The router
 * treats a path it cannot decode (`%ff`, `%zz`) as no route, which tells a
 * client its URL names nothing when it is in fact malformed; and `%00` decodes
 * to a NUL that PostgreSQL refuses to store (SQLite keeps it).
 */
import { quote } from "./Failures.js"

export interface TargetProblem {
  /** The query parameter concerned; empty for the path. */
  readonly path: string
  readonly message: string
}

const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const notUtf8 = "is not valid percent-encoded UTF-8"
const nul = "contains a NUL character (%00)"

/** The first problem of a query string's parameters, read as URLSearchParams would (`+` is a space). */
const queryProblem = (query: string): TargetProblem | undefined => {
  for (const part of query.split("&")) {
    if (!part.includes("%")) continue
    const equals = part.indexOf("=")
    const rawName = (equals === -1 ? part : part.slice(0, equals)).replaceAll("+", " ")
    const name = decoded(rawName)
    if (name === undefined) return { path: "", message: `A query parameter name ${notUtf8}` }
    const label = quote(name)
    if (name.includes("\u0000")) return { path: label, message: `The query parameter name ${nul}` }
    if (equals === -1) continue
    const value = decoded(part.slice(equals + 1).replaceAll("+", " "))
    if (value === undefined) return { path: label, message: `The query parameter ${label} ${notUtf8}` }
    if (value.includes("\u0000")) return { path: label, message: `The query parameter ${label} ${nul}` }
  }
  return undefined
}

/**
 * What is wrong with the percent-encoding of an origin-form target (`/a/b?c=d`),
 * or undefined. Targets without `%` have nothing to decode: Node's parser already
 * refuses control characters written raw.
 */
export const targetProblem = (url: string): TargetProblem | undefined => {
  if (!url.includes("%")) return undefined
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  const decodedPath = decoded(path)
  if (decodedPath === undefined) return { path: "", message: `The path ${notUtf8}` }
  if (decodedPath.includes("\u0000")) return { path: "", message: `The path ${nul}` }
  return mark === -1 ? undefined : queryProblem(url.slice(mark + 1))
}
