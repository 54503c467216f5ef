/**
 * The typed marketplace client of `clark market`, and how its failures read:
 * one line `code: message`, with the marketplace's own error code when it
 * answered with its error envelope. The token is sent as a bearer credential
 * and appears in no output.
 */
import {
  FetchHttpClient,
  type FileSystem,
  HttpApiClient,
  HttpClient,
  HttpClientError,
  HttpClientRequest,
  type HttpClientResponse,
  type Path
} from "@effect/platform"
import { Console, Data, Effect, flow, Option, ParseResult, Redacted, Schedule, Schema } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { ErrorCode, isMarketplaceError, type MarketplaceError } from "../../../schema/marketplace/Errors.js"
import { type Connection, type ConnectionOptions, MarketFailure, resolveConnection } from "./Settings.js"
import { bodyText } from "../Output.js"

/** A response the contract cannot decode: the server's fault (or another server), not the caller's input. */
class BadResponse extends Data.TaggedError("BadResponse")<{ readonly error: ParseResult.ParseError }> {}

/**
 * Transport failures are retried a few times; every POST carries an
 * idempotency key made once per invocation, so a retry is replayed by the
 * marketplace instead of applied twice.
 */
const retryTransport = (client: HttpClient.HttpClient) =>
  HttpClient.retryTransient(client, { mode: "errors-only", times: 2, schedule: Schedule.exponential("100 millis") })

const authenticate = (token: Option.Option<Redacted.Redacted>) => (client: HttpClient.HttpClient) =>
  Option.match(token, {
    onNone: () => client,
    onSome: (value) => HttpClient.mapRequest(client, HttpClientRequest.bearerToken(Redacted.value(value)))
  })

const makeClient = (connection: Connection) =>
  HttpApiClient.make(MarketplaceApi, {
    baseUrl: connection.baseUrl,
    transformClient: flow(authenticate(connection.token), retryTransport),
    // Only response decoding runs here, so a ParseError outside it is about the request the command built.
    transformResponse: Effect.catchIf(ParseResult.isParseError, (error) => Effect.fail(new BadResponse({ error })))
  })

export type MarketClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** The wire code of an error class: its tag in snake case (`IdempotencyKeyReused` → `idempotency_key_reused`). */
const errorCode = (error: MarketplaceError): string => {
  const code = error._tag.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase()
  return Schema.is(ErrorCode)(code) ? code : error._tag
}

const Envelope = Schema.parseJson(Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String }) }))

/** `code: message` of an error envelope the contract does not declare for the route (429, 503, …). */
const undeclaredAnswer = (response: HttpClientResponse.HttpClientResponse) =>
  bodyText(response).pipe(
    Effect.flatMap(Schema.decodeUnknown(Envelope)),
    Effect.map(({ error }) => `${error.code}: ${error.message}`),
    Effect.orElseSucceed(() => `bad_response: the marketplace answered ${response.status} to ${response.request.method} ${response.request.url}`)
  )

/** One message per field: an optional field's failure also reports its `undefined` alternative. */
const issues = (error: ParseResult.ParseError) => {
  const byPath = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.join(".")
    if (!byPath.has(path)) byPath.set(path, issue.message)
  }
  return [...byPath].map(([path, message]) => (path === "" ? message : `${path}: ${message}`)).join("; ")
}

/** Why a fetch failed, e.g. ECONNREFUSED, ENOTFOUND or "bad port". */
const transportReason = (error: HttpClientError.RequestError) => {
  const cause = error.cause instanceof Error ? error.cause.cause : undefined
  if (typeof cause !== "object" || cause === null) return ""
  if ("code" in cause && typeof cause.code === "string") return ` (${cause.code})`
  return cause instanceof Error && cause.message !== "" ? ` (${cause.message})` : ""
}

const credentialHint = (connection: Connection) =>
  Option.isNone(connection.token)
    ? ` (give --token, set CLARK_MARKETPLACE_TOKEN or put marketplace.token in ${connection.configFile})`
    : ""

const describe = (connection: Connection, error: unknown): Effect.Effect<string> => {
  if (error instanceof MarketFailure) return Effect.succeed(error.message)
  if (isMarketplaceError(error)) {
    const hint = error._tag === "Unauthorized" ? credentialHint(connection) : ""
    return Effect.succeed(`${errorCode(error)}: ${error.message}${hint}`)
  }
  if (error instanceof BadResponse) {
    return Effect.succeed(`bad_response: the marketplace's answer does not match the API contract: ${issues(error.error)}`)
  }
  if (ParseResult.isParseError(error)) return Effect.succeed(`validation_failed: ${issues(error)}`)
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "ResponseError") return undeclaredAnswer(error.response)
    return Effect.succeed(
      error.reason === "Transport"
        ? `unreachable: cannot reach the marketplace at ${connection.baseUrl}${transportReason(error)}`
        : `invalid_request: ${error.message}`
    )
  }
  return Effect.succeed(`error: ${error instanceof Error ? error.message : String(error)}`)
}

export type Call<A, E, R = never> = (
  api: MarketClient
) => Effect.Effect<readonly [A, HttpClientResponse.HttpClientResponse], E, R>

/**
 * One request of a command: resolves the connection, calls the typed client
 * and prints the response body as it came (`--json`) or rendered as text.
 * Failures become a `MarketFailure` whose message is the line to print.
 */
export const request = <A, E, R>(
  options: ConnectionOptions,
  call: Call<A, E, R>,
  render: (result: A) => string
): Effect.Effect<void, MarketFailure, FileSystem.FileSystem | Path.Path | Exclude<R, HttpClient.HttpClient>> =>
  Effect.gen(function*() {
    const connection = yield* resolveConnection(options)
    yield* Effect.gen(function*() {
      const [result, response] = yield* call(yield* makeClient(connection))
      yield* Console.log(options.json ? (yield* bodyText(response)).trimEnd() : render(result))
    }).pipe(
      Effect.catchAll((error) => Effect.flatMap(describe(connection, error), (line) => Effect.fail(new MarketFailure({ message: line })))),
      Effect.provide(FetchHttpClient.layer)
    )
  })
