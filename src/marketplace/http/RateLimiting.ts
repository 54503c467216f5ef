/**
 * Rate limits at the edge of the API. Public reads spend the client address's
 * budget; account and curation routes the budget of the credential that
 * authenticated them (a missing or refused credential spends the address's,
 * so guessing tokens is limited too). Health probes spend nothing. A request
 * whose idempotency key already has a record (a replay) is let through
 * without spending. Counted answers carry `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`; a refusal is 429
 * `rate_limited` with `Retry-After` as well, and never reaches the API.
 */
import { RateLimiter } from "@effect/experimental"
import {
  type Headers,
  HttpApi,
  HttpApiBuilder,
  HttpApiSchema,
  type HttpApp,
  type HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Context, Duration, Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { type Forbidden, RateLimited, RateLimitedWire, type Unauthorized } from "../../../schema/marketplace/Errors.js"
import { Authentication, type Credential, sessionCookieName } from "../../../schema/marketplace/Security.js"
import {
  addressKey,
  allowedHeaders,
  clientAddress,
  credentialKey,
  parseTrustedProxies,
  refusedHeaders,
  ReplayCheck,
  type RoutePattern,
  routeTable
} from "../../../services/marketplace/RateLimits.js"
import { RateLimits } from "../Settings.js"

/**
 * The outcome of the credential check the limiter made for this request. The
 * Authentication middleware answers from it instead of looking the token up a
 * second time.
 */
export class CheckedCredential extends Context.Tag("clark/marketplace/CheckedCredential")<
  CheckedCredential,
  Exit.Exit<Credential, Unauthorized | Forbidden>
>() {}

/** `live`, answering from the limiter's check when the request had one. */
export const authenticateOnce = <E, R>(live: Layer.Layer<Authentication, E, R>): Layer.Layer<Authentication, E, R> =>
  Layer.effect(
    Authentication,
    Effect.map(Authentication, (inner) => {
      const checked = (fallback: Effect.Effect<Credential, Unauthorized | Forbidden, HttpRouter.HttpRouter.Provided>) =>
        Effect.flatMap(
          Effect.serviceOption(CheckedCredential),
          Option.match({ onNone: () => fallback, onSome: (exit) => exit })
        )
      return Authentication.of({
        bearer: (token) => checked(inner.bearer(token)),
        cookie: (token) => checked(inner.cookie(token))
      })
    })
  ).pipe(Layer.provide(live))

/** Which budget each route of the contract spends. */
const routes = (() => {
  const patterns: Array<RoutePattern> = []
  HttpApi.reflect(MarketplaceApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, middleware }) => {
      patterns.push({
        method: endpoint.method,
        path: endpoint.path,
        kind: group.identifier === "system" && endpoint.name === "health"
          ? "exempt"
          : [...middleware].some((tag) => tag.key === Authentication.key)
          ? "authenticated"
          : "public"
      })
    }
  })
  return routeTable(patterns)
})()

// The two schemes of `Authentication`, read as HttpApiBuilder's security decoder reads them.
const bearerToken = (headers: Headers.Headers) => (headers["authorization"] ?? "").slice("Bearer ".length)
const cookieToken = (request: HttpServerRequest.HttpServerRequest) => request.cookies[sessionCookieName] ?? ""

const status = HttpApiSchema.getStatus(RateLimitedWire.ast, 429)

export const RateLimitingLive = HttpApiBuilder.middleware(
  MarketplaceApi,
  Effect.gen(function*() {
    const settings = yield* RateLimits
    if (!settings.enabled) return (app: HttpApp.Default) => app
    const limiter = yield* RateLimiter.RateLimiter
    const replays = yield* ReplayCheck
    const authentication = yield* Authentication
    // Checked when the settings were read; a list that fails here is a programming error.
    const proxies = yield* Effect.orDie(parseTrustedProxies(settings.trustedProxies))
    const window = Duration.seconds(settings.windowSeconds)

    const refusal = (error: RateLimiter.RateLimitExceeded, spends: "address" | "credential") => {
      const requestId = randomUUID()
      const retryAfter = Duration.toMillis(error.retryAfter)
      const headers = refusedHeaders(error.limit, retryAfter)
      const body = Schema.encodeSync(RateLimitedWire)(
        new RateLimited({
          message: `Too many requests ${spends === "address" ? "from this address" : "with this credential"}: ` +
            `at most ${error.limit} every ${settings.windowSeconds} seconds; retry after ${
              headers["retry-after"]
            } seconds`,
          requestId,
          details: { limit: error.limit, windowSeconds: settings.windowSeconds, retryAfter: Number(headers["retry-after"]) }
        })
      )
      return HttpServerResponse.unsafeJson(body, { status, headers: { ...headers, "x-request-id": requestId } })
    }

    /** Spends one request (none for a replay) from `key`, then answers or refuses. */
    const limited = <E, R>(
      app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      key: string,
      limit: number,
      spends: "address" | "credential",
      replay: boolean
    ) =>
      limiter.consume({ key, limit, window, tokens: replay ? 0 : 1, algorithm: "fixed-window", onExceeded: "fail" })
        .pipe(
          Effect.matchEffect({
            onSuccess: (result) =>
              Effect.map(app, (response) =>
                HttpServerResponse.setHeaders(
                  response,
                  allowedHeaders(result.limit, result.remaining, Duration.toMillis(result.resetAfter))
                )),
            // A store that fails lets requests through: limits protect the service, and refusing
            // everyone because the counters are unreachable would be the outage they guard against.
            onFailure: (error) =>
              error.reason === "Exceeded"
                ? Effect.succeed(refusal(error, spends))
                : Effect.zipRight(Effect.logWarning("Rate limiting is unavailable", error), app)
          })
        )

    return (app: HttpApp.Default) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const kind = routes.classify(request.method, request.url)
        if (kind === "exempt") return app
        const address = () =>
          addressKey(
            clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], proxies)
          )
        if (kind === "public") return limited(app, address(), settings.publicLimit, "address", false)
        const bearer = bearerToken(request.headers)
        const cookie = cookieToken(request)
        const check = authentication.bearer(Redacted.make(bearer)).pipe(
          Effect.catchAll(() => authentication.cookie(Redacted.make(cookie)))
        )
        return Effect.flatMap(Effect.exit(check), (checked) => {
          const inner = Effect.provideService(app, CheckedCredential, checked)
          if (Exit.isFailure(checked)) return limited(inner, address(), settings.publicLimit, "address", false)
          const credential = checked.value
          const key = request.headers["idempotency-key"]
          const replay = key === undefined ? Effect.succeed(false) : replays.recorded(credential.userId, key)
          return Effect.flatMap(replay, (free) =>
            limited(
              inner,
              credentialKey(credential.viaCookie ? cookie : bearer),
              settings.authenticatedLimit,
              "credential",
              free
            ))
        })
      })
  })
)
