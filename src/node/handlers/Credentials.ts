/**
 * Package credentials and connections (docs/decisions.md, "Package credentials", "Package connections"):
 * POST /credentials, POST /connections/{packageId}/start and the public GET /connections/callback/{packageId}.
 * A credential's value, a connection's code and its state never reach a log, an audit entry, an error or a page.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, type Redacted } from "effect"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import {
  type CallbackOutcome,
  type CallbackParams,
  callbackUrlFor,
  Connections,
  statusOfOutcome
} from "../../../services/node/Connections.js"
import { CallbackHostInvalid, PackageCredentials } from "../../../services/node/PackageCredentials.js"
import { wire } from "../http/Errors.js"

/** Who did what to which package (names and outcomes only). */
const audit = (kind: string, detail: Record<string, unknown>, caller: Option.Option<{ surface: string; channel: string }>) =>
  Effect.flatMap(AuditLog, (log) =>
    log.append({
      kind,
      ...Option.match(caller, { onNone: () => ({}), onSome: ({ channel, surface }) => ({ surface, channel }) }),
      detail
    }))

export const storeCredential = ({ payload }: {
  readonly payload: { readonly packageId: string; readonly name: string; readonly value: Redacted.Redacted<string> }
}) =>
  Effect.gen(function*() {
    const credentials = yield* PackageCredentials
    const stored = yield* credentials.store(payload.packageId, payload.name, payload.value)
    yield* audit("package.credential.stored", { packageId: stored.packageId, name: stored.name }, Option.some(yield* CurrentCaller))
    return { packageId: stored.packageId, name: stored.name, stored: true as const }
  }).pipe(wire)

export const startConnection = ({ path }: { readonly path: { readonly packageId: string } }) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // Checked before a state is issued, so a request that cannot be answered leaves none behind.
    const callbackUrl = yield* Option.match(callbackUrlFor(request.headers.host, path.packageId), {
      onNone: () => Effect.fail(new CallbackHostInvalid()),
      onSome: Effect.succeed
    })
    const started = yield* Effect.flatMap(Connections, (connections) => connections.start(path.packageId))
    yield* audit("package.connection.started", { packageId: path.packageId }, Option.some(yield* CurrentCaller))
    return { packageId: path.packageId, state: started.state, callbackUrl, expiresAt: started.expiresAt }
  }).pipe(wire)

/** Fixed sentences: nothing of the request (code, state, error text, not even the package id) is on a page. */
const pageText: Record<CallbackOutcome, readonly [title: string, text: string]> = {
  connected: ["Connected", "Connected. You can close this window."],
  declined: ["Not connected", "The connection was not made: the provider did not allow it. You can close this window."],
  incomplete: ["Not connected", "The connection was not made: the provider's answer had no code. Start again from the app."],
  malformed: ["Not connected", "This is not an address the provider sends back. Nothing was stored."],
  "no-state": ["Not connected", "This address carries no connection state. Nothing was stored. Start again from the app."],
  refused: [
    "Not connected",
    "This connection link is not valid: it expired, was already used, or belongs to another package. Nothing was stored. Start again from the app."
  ],
  "package-gone": ["Not connected", "The package is no longer installed. Nothing was stored."],
  "not-admitted": ["Not connected", "This package takes no credentials this way. Nothing was stored."],
  unavailable: ["Not connected", "The node could not store the connection. Nothing was stored. Try again later."]
}

export const pageHeaders = {
  "content-security-policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY"
} as const

const page = (outcome: CallbackOutcome) => {
  const [title, text] = pageText[outcome]
  return HttpServerResponse.text(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
      `<title>${title}</title></head><body><p>${text}</p></body></html>\n`,
    { status: statusOfOutcome[outcome], contentType: "text/html; charset=utf-8", headers: pageHeaders }
  )
}

/** Outcomes where no state was spent are not audited: anyone can open the address. */
const spent = (outcome: CallbackOutcome) => outcome !== "malformed" && outcome !== "no-state" && outcome !== "refused"

export const connectionCallback = ({ path, urlParams }: {
  readonly path: { readonly packageId: string }
  readonly urlParams: CallbackParams
}) =>
  Effect.gen(function*() {
    const outcome = yield* Effect.flatMap(Connections, (connections) => connections.complete(path.packageId, urlParams))
    if (spent(outcome)) yield* audit("package.connection.returned", { packageId: path.packageId, outcome }, Option.none())
    return page(outcome)
  })
