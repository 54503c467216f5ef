/**
 * Connecting a package's account with a provider (docs/decisions.md, "Package connections"). The node issues a
 * single-use state bound to the package, valid ten minutes by the node's clock; the provider sends the browser
 * back to GET /connections/callback/{packageId} with it and a code. A state the node holds, for that package,
 * in time, is spent by that one request whatever it carries; the code it brings becomes the package's
 * credential `connection_code`. The rules are the pure functions below; `Connections` is the service.
 */
import { Context, Duration, type Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { PackageNotInstalled, TileKeyConsumer } from "./CredentialErrors.js"

/** How long an issued state can be used. */
export const stateLifetime = Duration.minutes(10)

/** States waiting per package; issuing one more drops the oldest (a page opened many times keeps working). */
export const waitingPerPackage = 16

/** The credential a connection's code is stored as (`CREDENTIAL_CONNECTION_CODE` in the service). */
export const codeCredentialName = "connection_code"

/** A code longer than a credential may be is not a provider's code. */
export const maxCodeLength = 8192

/** Only the state's SHA-256 is kept: the database never holds a usable state. */
export const hashState = (state: string) => createHash("sha256").update(state, "utf8").digest("hex")

/** A query parameter as decoded: a repeated one arrives as an array. */
export type Param = string | ReadonlyArray<string> | undefined

export interface CallbackParams {
  readonly state?: Param
  readonly code?: Param
  readonly error?: Param
  readonly error_description?: Param
}

/** What the request says, before any state is looked up. */
export type CallbackRead =
  | { readonly kind: "malformed" }
  | { readonly kind: "no-state" }
  | { readonly kind: "read"; readonly state: string; readonly code: string | undefined; readonly error: string | undefined }

const isRepeated = (param: Param) => param !== undefined && typeof param !== "string"

export const readCallback = (params: CallbackParams): CallbackRead => {
  if ([params.state, params.code, params.error, params.error_description].some(isRepeated)) return { kind: "malformed" }
  const state = params.state as string | undefined
  const code = params.code as string | undefined
  const error = params.error as string | undefined
  if (state === undefined || state === "") return { kind: "no-state" }
  if (code !== undefined && code.length > maxCodeLength) return { kind: "malformed" }
  return { kind: "read", state, code: code === "" ? undefined : code, error: error === "" ? undefined : error }
}

/** An issued state as stored. */
export interface IssuedState {
  readonly packageId: string
  readonly expiresAtMillis: number
}

/** The spent state allows this package's callback only while it lasts (10:00 after issue is already too late). */
export const stateHolds = (issued: Option.Option<IssuedState>, packageId: string, nowMillis: number) =>
  Option.isSome(issued) && issued.value.packageId === packageId && nowMillis < issued.value.expiresAtMillis

/** What the provider sent back with a valid state: its refusal wins over any code. */
export const providerAnswer = (read: { readonly code: string | undefined; readonly error: string | undefined }) =>
  read.error !== undefined ? "declined" as const : read.code === undefined ? "incomplete" as const : "code" as const

/** How a callback ended; each has its page and status. */
export type CallbackOutcome =
  /** The code is stored as the package's credential. */
  | "connected"
  /** The provider refused (an `error` parameter): nothing stored, the state spent. */
  | "declined"
  /** A valid state without a code or an error: nothing stored, the state spent. */
  | "incomplete"
  /** A parameter repeated or a code too long: nothing looked up. */
  | "malformed"
  /** No state. */
  | "no-state"
  /** A state the node does not hold now for this package: unknown, spent, expired or another package's. */
  | "refused"
  /** The package was uninstalled since the state was issued. */
  | "package-gone"
  /** The package declares itself a map tile key consumer: nothing is stored for it. */
  | "not-admitted"
  /** The secret broker could not store the code. */
  | "unavailable"

export const statusOfOutcome: Record<CallbackOutcome, 200 | 400 | 404 | 503> = {
  connected: 200,
  declined: 200,
  incomplete: 400,
  malformed: 400,
  "no-state": 400,
  refused: 404,
  "package-gone": 404,
  "not-admitted": 400,
  unavailable: 503
}

const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/

/**
 * Where the provider sends the browser back: the address the caller reached the node at (its `Host`, checked
 * to be a plain host and port so nothing else can be put in the URL), on http as the node serves.
 */
export const callbackUrlFor = (host: string | undefined, packageId: string): Option.Option<string> =>
  host !== undefined && host.length <= 300 && hostPattern.test(host)
    ? Option.some(`http://${host}${callbackPathFor(packageId)}`)
    : Option.none()

export const callbackPathFor = (packageId: string) => `/connections/callback/${encodeURIComponent(packageId)}`

/** An issued state: the only time the node shows it. */
export interface StartedConnection {
  readonly state: string
  readonly expiresAt: string
}

export class Connections extends Context.Tag("clark/node/Connections")<Connections, {
  /** Issues a state for an installed package that is not a map tile key consumer. */
  readonly start: (packageId: string) => Effect.Effect<StartedConnection, PackageNotInstalled | TileKeyConsumer>
  /** Spends the state the request carries (if the node holds it) and says how the callback ended. */
  readonly complete: (packageId: string, params: CallbackParams) => Effect.Effect<CallbackOutcome>
}>() {}
