/**
 * How node routes authenticate. The surface a request came from is derived by
 * the node from how it arrived (token, app secret, endpoint), never from the
 * body. Every authenticated route declares exactly one of these middlewares:
 * `PersonOnly` routes refuse machine surfaces with 403 PERSON_ONLY.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import { refusals } from "./Errors.js"

export const Surface = Schema.Literal("person", "mcp", "relay", "cli-api", "automation", "peer")
export type Surface = typeof Surface.Type

/** Machine surfaces: everything that is not the person's own app pages. */
export const machineSurfaces: ReadonlyArray<Surface> = ["mcp", "relay", "cli-api", "automation", "peer"]

export const Channel = Schema.Literal("text", "voice")
export type Channel = typeof Channel.Type

/** Header the host app's pages send with the app secret. */
export const appSecretHeader = "x-app-secret"
/** Header by which the app reports a spoken message; trusted only with the app secret. */
export const appChannelHeader = "x-app-channel"

export interface Caller {
  readonly surface: Surface
  readonly channel: Channel
  /**
   * The relay connection a request came over (set by the relay, never from a request); absent elsewhere. What the
   * node grants over the relay (a file write right) is held by that connection only.
   */
  readonly connection?: string | undefined
}

export class CurrentCaller extends Context.Tag("clark/node/CurrentCaller")<CurrentCaller, Caller>() {}

const security = { bearer: HttpApiSecurity.bearer }

/** Any holder of the local token. */
export class Authenticated extends HttpApiMiddleware.Tag<Authenticated>()("Authenticated", {
  failure: refusals("UNAUTHENTICATED"),
  provides: CurrentCaller,
  security
}) {}

/** Person-only: the token plus the app secret. */
export class PersonOnly extends HttpApiMiddleware.Tag<PersonOnly>()("PersonOnly", {
  failure: refusals("UNAUTHENTICATED", "PERSON_ONLY"),
  provides: CurrentCaller,
  security
}) {}
