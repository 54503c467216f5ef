/**
 * Turning whatever a request failed with (a declared error, a decoding
 * failure, an unknown route, an unreadable body, a defect) into the one
 * declared error each API answers with. The envelopes differ per API; the
 * classification is shared.
 */
import { HttpApiError } from "@effect/platform"
import { Cause, Effect, Option } from "effect"

export interface Issue {
  readonly path: string
  readonly message: string
}

/** How much of a value sent by the client an error quotes back. */
export const maxQuoted = 64

/** A client's value cut to a short prefix: an error never echoes a large input back whole. */
export const quote = (text: string): string => (text.length > maxQuoted ? `${text.slice(0, maxQuoted)}…` : text)

/**
 * Schema's messages end with the value they got (`Expected …, actual "…"`), whole: a
 * 1 MB text over its maxLength came back in the answer. Only that quoted value is
 * cut; what was expected stays whole.
 */
const cutActual = (message: string): string => {
  const at = message.indexOf(", actual ")
  return at === -1 ? message : message.slice(0, at + 9) + quote(message.slice(at + 9))
}

/** Other messages quote what they could not read (`Unable to decode "…" into a number`): long quotes are cut too. */
const longQuote = new RegExp(String.raw`"((?:[^"\\]|\\.){${maxQuoted + 1},})"`, "g")

const cutQuotes = (message: string): string =>
  message.replace(longQuote, (_, inner: string) => `"${inner.slice(0, maxQuoted)}…"`)

/**
 * The decoding issues with a dotted path each. An optional field that fails
 * also reports "Expected undefined" for its absent branch: noise to a client.
 */
export const decodeIssues = (error: HttpApiError.HttpApiDecodeError): ReadonlyArray<Issue> =>
  error.issues
    .map((issue) => ({ path: issue.path.map((key) => quote(String(key))).join("."), message: cutQuotes(cutActual(issue.message)) }))
    .filter((issue, _, all) =>
      !(issue.message.startsWith("Expected undefined") && all.some((other) => other !== issue && other.path === issue.path))
    )

/** The distinct non-empty paths named by the issues, in order. */
export const namedPaths = (issues: ReadonlyArray<Issue>): ReadonlyArray<string> => [
  ...new Set(issues.map((issue) => issue.path).filter((path) => path.length > 0))
]

export interface Classification<E> {
  /** The error itself when it is already one the API declares; undefined otherwise. */
  readonly declared: (reason: unknown) => E | undefined
  /** Failures that must leave unchanged (e.g. a response the API renders itself). */
  readonly passThrough?: (reason: unknown) => boolean
  readonly invalid: (issues: ReadonlyArray<Issue>) => E
  readonly noRoute: () => E
  readonly unreadableBody: () => E
  readonly internal: () => E
}

const isTagged = <Tag extends string>(tag: Tag) => (u: unknown): u is { readonly _tag: Tag } =>
  typeof u === "object" && u !== null && "_tag" in u && u._tag === tag

/** The declared error a cause becomes, or undefined when the cause must pass through; defects are logged. */
export const classify = <E>(cause: Cause.Cause<unknown>, as: Classification<E>) =>
  Effect.gen(function*() {
    if (Cause.isInterruptedOnly(cause)) return undefined
    const failure = Cause.failureOption(cause)
    const reason = Option.isSome(failure) ? failure.value : Cause.squash(cause)
    const declared = as.declared(reason)
    if (declared !== undefined) return declared
    if (as.passThrough?.(reason) === true) return undefined
    if (reason instanceof HttpApiError.HttpApiDecodeError) return as.invalid(decodeIssues(reason))
    if (isTagged("RouteNotFound")(reason)) return as.noRoute()
    if (isTagged("RequestError")(reason)) return as.unreadableBody()
    yield* Effect.logError("Unexpected failure", cause)
    return as.internal()
  })
