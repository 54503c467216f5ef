/**
 * What `clark node conversations|send|stop` run: calls to a running node as the
 * command-line api. Calls go through the typed client derived from the node's
 * HttpApi, authenticated with the local token of `<data-dir>/identity.json`;
 * the streaming route is read with a plain HttpClient and parsed as
 * Server-Sent Events, since the typed client buffers the body whole.
 */
import * as Sse from "@effect/experimental/Sse"
import {
  FetchHttpClient,
  FileSystem,
  HttpApiClient,
  HttpClient,
  HttpClientError,
  type HttpClientResponse,
  HttpClientRequest
} from "@effect/platform"
import { Cause, Config, ConfigError, Console, Data, Effect, Option, ParseResult, Schema, Stream } from "effect"
import * as path from "node:path"
import { identityFile } from "../../../layers/node/fs/Identity.js"
import { NodeApi } from "../../../schema/node/Api.js"
import { type ConversationSummary, MessageResult, type Resolution } from "../../../schema/node/Conversation.js"
import { NodeError } from "../../../schema/node/Errors.js"
import type { ConnectionOptions, CreateOptions, SendOptions, StopOptions } from "../NodeClient.js"
import { defaultNodeUrl } from "../NodeClient.js"
import { resolveDataDir } from "../NodeServe.js"
import { bodyText, clip, table } from "../Output.js"

/** A refusal found by the command itself, printed like the node's own: `code: message`. */
export class ClientFailure extends Data.TaggedError("ClientFailure")<{
  readonly code: string
  readonly message: string
}> {}

const UrlConfig = Config.string("CLARK_NODE_URL").pipe(Config.withDefault(defaultNodeUrl))

const resolveUrl = (option: Option.Option<string>) =>
  Effect.gen(function*() {
    const value = Option.isSome(option) ? option.value : yield* UrlConfig
    const url = URL.canParse(value) ? new URL(value) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return yield* new ClientFailure({ code: "INVALID_URL", message: `not an http(s) URL: ${value}` })
    }
    return url.href.replace(/\/+$/, "")
  })

const IdentityToken = Schema.parseJson(Schema.Struct({ localToken: Schema.String.pipe(Schema.minLength(1)) }))

/** The local token of the node's data dir. */
const readToken = (option: Option.Option<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = identityFile(path.resolve(yield* resolveDataDir(option)))
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError(() =>
        new ClientFailure({
          code: "IDENTITY_UNREADABLE",
          message: `cannot read ${file}; start the node with \`clark node serve\` or pass --data-dir`
        })
      )
    )
    const identity = yield* Schema.decodeUnknown(IdentityToken)(text).pipe(
      Effect.mapError(() => new ClientFailure({ code: "IDENTITY_INVALID", message: `${file} holds no local token` }))
    )
    return identity.localToken
  })

/** The typed client and a plain client for the streaming route, both with the base URL and the token. */
export const connect = (options: ConnectionOptions) =>
  Effect.gen(function*() {
    const baseUrl = yield* resolveUrl(options.url)
    const token = yield* readToken(options.dataDir)
    const authenticated = HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    const api = yield* HttpApiClient.make(NodeApi, { baseUrl, transformClient: authenticated })
    const http = (yield* HttpClient.HttpClient).pipe(
      authenticated,
      HttpClient.mapRequest(HttpClientRequest.prependUrl(baseUrl))
    )
    return { api, http }
  })

// ---------------------------------------------------------------------------
// output and errors

/** Writes to a stream and waits until it has been handed to the OS, so each event shows as it arrives. */
const write = (stream: NodeJS.WriteStream, text: string) =>
  Effect.async<void>((resume) => {
    stream.write(text, () => resume(Effect.void))
  })

const out = (text: string) => write(process.stdout, text)
const err = (text: string) => write(process.stderr, text)

/** The raw body of a typed call, for `--json`. */
export const printRaw = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(bodyText(response), (text) => out(text.endsWith("\n") ? text : `${text}\n`))

const WireError = Schema.parseJson(Schema.Struct({ code: Schema.String, message: Schema.String }))

/** `{code, message}` of an error body, when the body is one. */
const wireError = (response: HttpClientResponse.HttpClientResponse) =>
  bodyText(response).pipe(
    Effect.flatMap(Schema.decodeUnknown(WireError)),
    Effect.option
  )

const describe = (error: unknown): Effect.Effect<string> => {
  if (error instanceof NodeError || error instanceof ClientFailure) return Effect.succeed(`${error.code}: ${error.message}`)
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return Effect.succeed(
        error.reason === "Transport"
          ? `NODE_UNREACHABLE: cannot reach the node at ${new URL(error.request.url).origin}`
          : `INVALID_REQUEST: ${error.message}`
      )
    }
    const status = error.response.status
    return Effect.map(wireError(error.response), (body) =>
      Option.match(body, {
        onSome: ({ code, message }) => `${code}: ${message}`,
        onNone: () => `BAD_RESPONSE: the node answered ${status} to ${error.request.method} ${error.request.url}`
      }))
  }
  if (ParseResult.isParseError(error)) return Effect.succeed(`BAD_RESPONSE: ${error.message}`)
  if (ConfigError.isConfigError(error)) return Effect.succeed(`INVALID_CONFIG: ${String(error)}`)
  if (error instanceof Sse.SseError) return Effect.succeed(`BAD_RESPONSE: ${error.message}`)
  return Effect.succeed(`ERROR: ${error instanceof Error ? error.message : String(error)}`)
}

/**
 * Runs a command with an HttpClient; a failure prints `code: message` to
 * stderr and sets a non-zero exit code, with no stack trace.
 */
export const runCommand = <E>(effect: Effect.Effect<void, E, HttpClient.HttpClient | FileSystem.FileSystem>) =>
  effect.pipe(
    Effect.provide(FetchHttpClient.layer),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.gen(function*() {
          const failure = Cause.failureOption(cause)
          const defect = Cause.squash(cause)
          const line = Option.isSome(failure)
            ? yield* describe(failure.value)
            : `INTERNAL: ${defect instanceof Error ? defect.message : String(defect)}`
          yield* err(`${line}\n`)
          yield* Effect.sync(() => {
            process.exitCode = 1
          })
        })
    )
  )

// ---------------------------------------------------------------------------
// conversations


export const conversationTable = (conversations: ReadonlyArray<ConversationSummary>) =>
  table([
    ["ID", "TITLE", "RUNNING", "UPDATED"],
    ...conversations.map((c) => [
      c.conversationId,
      c.title === null || c.title.trim() === "" ? "(untitled)" : clip(c.title, 48),
      c.running ? "yes" : "no",
      c.updatedAt
    ])
  ])

export const list = (options: ConnectionOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const [result, response] = yield* api.conversations.list({ withResponse: true })
    if (options.json) return yield* printRaw(response)
    yield* Console.log(result.conversations.length === 0 ? "no conversations" : conversationTable(result.conversations))
  }))

export const create = (options: CreateOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    const [result, response] = yield* api.conversations.create({
      payload: Option.match(options.title, { onNone: () => ({}), onSome: (title) => ({ title }) }),
      withResponse: true
    })
    if (options.json) return yield* printRaw(response)
    yield* Console.log(result.conversationId)
  }))

// ---------------------------------------------------------------------------
// send

/** The reply text of a result: the text blocks of its assistant entries. */
export const replyText = (result: MessageResult) =>
  result.timeline.entries
    .filter((entry) => entry.role === "assistant")
    .flatMap((entry) => entry.blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])))
    .join("")

const resolutionLine = (result: MessageResult) =>
  result.resolution === "app-intent" && result.appIntent !== undefined
    ? `resolution: app-intent (${result.appIntent.kind})`
    : `resolution: ${result.resolution}`

/**
 * The resolutions that leave the message without a complete reply. A script that sends a message must see
 * them in the exit code, so the command fails with the reason on stderr; answered, steered, app-intent and
 * background (202: the turn goes on) succeed.
 */
const unfinished: { readonly [R in Resolution]?: ClientFailure } = {
  failed: new ClientFailure({ code: "TURN_FAILED", message: "the reply failed" }),
  stopped: new ClientFailure({ code: "TURN_STOPPED", message: "the reply was stopped before it was done" }),
  cancelled: new ClientFailure({ code: "TURN_CANCELLED", message: "the message was cancelled before its reply started" })
}

/** The error blocks of the reply, as `code: message` lines. */
const replyErrors = (result: MessageResult) =>
  result.timeline.entries
    .filter((entry) => entry.role === "assistant")
    .flatMap((entry) => entry.blocks.flatMap((block) => (block.type === "error" ? [`${block.code}: ${block.message}\n`] : [])))

/**
 * Ends the command by the resolution: a resolution other than `answered` is named on stdout when it
 * succeeds, and fails the command when the reply is unfinished (after the reply's own errors, unless the
 * stream printed them already as they came).
 */
const settle = (result: MessageResult, options: { readonly json: boolean; readonly errorsPrinted: boolean }) =>
  Effect.gen(function*() {
    const failure = unfinished[result.resolution]
    if (failure === undefined) {
      if (!options.json && result.resolution !== "answered") yield* out(`${resolutionLine(result)}\n`)
      return
    }
    if (!options.errorsPrinted) yield* Effect.forEach(replyErrors(result), err, { discard: true })
    return yield* failure
  })

const sendWaiting = (api: Effect.Effect.Success<ReturnType<typeof connect>>["api"], id: string, text: string, json: boolean) =>
  Effect.gen(function*() {
    const [result, response] = yield* api.conversations.send({ path: { id }, payload: { text }, withResponse: true })
    if (json) yield* printRaw(response)
    else {
      const reply = replyText(result)
      if (reply.length > 0) yield* out(reply.endsWith("\n") ? reply : `${reply}\n`)
    }
    yield* settle(result, { json, errorsPrinted: false })
  })

const useColour = () => process.stdout.isTTY === true && process.env.NO_COLOR === undefined
const dim = (text: string) => (useColour() ? `\u001b[2m${text}\u001b[22m` : text)

const EventData = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const decodeData = (event: Sse.Event) =>
  Schema.decodeUnknown(EventData)(event.data).pipe(Effect.orElseSucceed((): Record<string, unknown> => ({})))

const field = (data: Record<string, unknown>, key: string) => {
  const value = data[key]
  return typeof value === "string" ? value : undefined
}

/** Prints the events of a turn as they arrive; ends at `done`. */
const sendStreaming = (
  http: HttpClient.HttpClient,
  id: string,
  text: string,
  json: boolean
) =>
  Effect.gen(function*() {
    const response = yield* http.execute(
      HttpClientRequest.post(`/conversations/${encodeURIComponent(id)}/messages/stream`).pipe(
        HttpClientRequest.accept("text/event-stream"),
        HttpClientRequest.bodyUnsafeJson({ text })
      )
    )
    if (response.status >= 300) {
      const body = yield* wireError(response)
      return yield* new ClientFailure(Option.getOrElse(body, () => ({
        code: "BAD_RESPONSE",
        message: `the node answered ${response.status} to the streaming route`
      })))
    }
    /** What the last printed output was, to place line breaks and the `thinking: ` prefix. */
    let mode: "start" | "text" | "reasoning" | "line" = "start"
    let done: string | undefined
    const breakLine = () => (mode === "text" || mode === "reasoning" ? out("\n") : Effect.void)

    yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.makeChannel()),
      Stream.takeUntil((event) => event.event === "done"),
      Stream.runForEach((event) =>
        Effect.gen(function*() {
          if (event.event === "done") {
            done = event.data
            return
          }
          const data = yield* decodeData(event)
          if (json && event.event !== "error") return
          switch (event.event) {
            case "delta": {
              if (mode === "reasoning") yield* out("\n")
              mode = "text"
              yield* out(field(data, "text") ?? "")
              break
            }
            case "reasoning": {
              const prefix = mode === "reasoning" ? "" : "thinking: "
              if (mode === "text") yield* out("\n")
              mode = "reasoning"
              yield* out(dim(`${prefix}${field(data, "text") ?? ""}`))
              break
            }
            case "tool-start": {
              yield* breakLine()
              mode = "line"
              yield* out(`→ tool ${field(data, "name") ?? "?"}\n`)
              break
            }
            case "tool-end": {
              yield* breakLine()
              mode = "line"
              yield* out(`← tool ${field(data, "name") ?? "?"}: ${field(data, "status") ?? "done"}\n`)
              break
            }
            case "error": {
              yield* breakLine()
              if (mode !== "start") mode = "line"
              yield* err(`${field(data, "code") ?? "ERROR"}: ${field(data, "message") ?? event.data}\n`)
              break
            }
            default:
              break
          }
        })
      )
    )
    if (done === undefined) {
      yield* breakLine()
      return yield* new ClientFailure({ code: "STREAM_ENDED", message: "the stream ended before the reply was done" })
    }
    const result = yield* Schema.decodeUnknown(Schema.parseJson(MessageResult))(done)
    if (json) yield* out(`${done}\n`)
    else yield* out(mode === "start" || mode === "line" ? "" : "\n")
    yield* settle(result, { json, errorsPrinted: true })
  })

export const send = (options: SendOptions) =>
  runCommand(Effect.gen(function*() {
    const { api, http } = yield* connect(options)
    yield* options.stream
      ? sendStreaming(http, options.conversation, options.text, options.json)
      : sendWaiting(api, options.conversation, options.text, options.json)
  }))

// ---------------------------------------------------------------------------
// stop

export const stop = (options: StopOptions) =>
  runCommand(Effect.gen(function*() {
    const { api } = yield* connect(options)
    if (Option.isSome(options.conversation)) {
      const [result, response] = yield* api.conversations.stop({
        path: { id: options.conversation.value },
        payload: {},
        withResponse: true
      })
      if (options.json) return yield* printRaw(response)
      return yield* Console.log(result.stopped ? "stopped" : "nothing was running")
    }
    const [result, response] = yield* api.conversations.emergencyStop({ withResponse: true })
    if (options.json) return yield* printRaw(response)
    const { commands, jobs, turns, waiting } = result.stopped
    yield* Console.log(`stopped: ${turns} turns, ${waiting} waiting, ${jobs} jobs, ${commands} commands`)
  }))
