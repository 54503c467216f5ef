/**
 * Where `clark market` finds the marketplace and its credential. Each value is
 * taken from the first of: the flag, the environment (`CLARK_MARKETPLACE_URL`,
 * `CLARK_MARKETPLACE_TOKEN`), the config file (`CLARK_CONFIG`, else
 * `$XDG_CONFIG_HOME/clark/config.json`, else `~/.config/clark/config.json`),
 * and for the URL the marketplace's default listen address.
 */
import { Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Config, ConfigError, Data, Effect, Option, ParseResult, Redacted, Schema } from "effect"
import * as os from "node:os"

/** The default listen address of `clark marketplace serve` (see `ListenConfig` in src/marketplace/Server.ts). */
export const defaultMarketplaceUrl = "http://127.0.0.1:8787"

/** A failure of a `clark market` command, printed by the CLI as `code: detail`. */
export class MarketFailure extends Data.TaggedError("MarketFailure")<{ readonly message: string }> {}

const marketFailure = (code: string, detail: string) => new MarketFailure({ message: `${code}: ${detail}` })

export const connectionOptions = {
  url: Options.text("url").pipe(
    Options.withDescription(
      `the marketplace's base URL (default: CLARK_MARKETPLACE_URL, else the config file, else ${defaultMarketplaceUrl})`
    ),
    Options.optional
  ),
  token: Options.redacted("token").pipe(
    Options.withDescription(
      "bearer credential: a personal API token (cmk_…) or a session token (default: CLARK_MARKETPLACE_TOKEN, else the config file)"
    ),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("print the response body as JSON"))
}

export interface ConnectionOptions {
  readonly url: Option.Option<string>
  readonly token: Option.Option<Redacted.Redacted>
  readonly json: boolean
}

export interface Connection {
  /** Origin plus any path prefix, without `/api/v1` (the contract's paths carry it). */
  readonly baseUrl: string
  readonly token: Option.Option<Redacted.Redacted>
  readonly configFile: string
}

const ConfigFile = Schema.Struct({
  marketplace: Schema.optional(Schema.Struct({
    url: Schema.optional(Schema.String),
    token: Schema.optional(Schema.Redacted(Schema.String))
  }))
})

const blank = (text: string) => text.trim() === ""

const environment = (name: string) =>
  Effect.map(Config.option(Config.string(name)), Option.filter((value) => !blank(value)))

/** `CLARK_CONFIG`, else `$XDG_CONFIG_HOME/clark/config.json` (when absolute, as XDG asks), else `~/.config/…`. */
const configFilePath = Effect.gen(function*() {
  const path = yield* Path.Path
  const explicit = yield* environment("CLARK_CONFIG")
  if (Option.isSome(explicit)) return path.resolve(explicit.value)
  const xdg = Option.filter(yield* environment("XDG_CONFIG_HOME"), (dir) => path.isAbsolute(dir))
  const home = Option.getOrElse(yield* environment("HOME"), () => os.homedir())
  return path.join(Option.getOrElse(xdg, () => path.join(home, ".config")), "clark", "config.json")
})

const invalidFile = (file: string, detail: string) => marketFailure("invalid_config", `${file} ${detail}`)

/**
 * The `marketplace` section of the config file; none when the file does not
 * exist. Messages name the file and the faulty fields, never a value, since
 * the file holds a token.
 */
const readConfigFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.map(Option.some),
      Effect.catchTag("SystemError", (error) =>
        error.reason === "NotFound"
          ? Effect.succeedNone
          : Effect.fail(invalidFile(file, `cannot be read (${error.reason})`))),
      Effect.catchTag("BadArgument", () => Effect.fail(invalidFile(file, "cannot be read")))
    )
    if (Option.isNone(text)) return {}
    const json = yield* Schema.decodeUnknown(Schema.parseJson())(text.value).pipe(
      Effect.mapError(() => invalidFile(file, "is not valid JSON"))
    )
    const config = yield* Schema.decodeUnknown(ConfigFile)(json).pipe(
      Effect.mapError((error) => {
        const fields = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
          issue.path.length === 0 ? "(top level)" : issue.path.join(".")
        )
        return invalidFile(
          file,
          `does not match {"marketplace": {"url": string, "token": string}} at ${[...new Set(fields)].join(", ")}`
        )
      })
    )
    return config.marketplace ?? {}
  })

interface Sourced<A> {
  readonly value: A
  readonly from: string
}

const sourced = <A>(option: Option.Option<A>, from: string): Option.Option<Sourced<A>> =>
  Option.map(option, (value) => ({ value, from }))

/** An http(s) base URL, without trailing slashes or a trailing `/api/v1`. */
const normalizeUrl = ({ from, value }: Sourced<string>) => {
  const url = URL.canParse(value) ? new URL(value) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return Effect.fail(marketFailure("invalid_config", `${from} is not an http(s) URL: ${value}`))
  }
  if (url.username !== "" || url.password !== "") {
    // Not echoed: user information in a URL is a credential.
    return Effect.fail(marketFailure("invalid_config", `${from} must not carry user information; use --token`))
  }
  return Effect.succeed(`${url.origin}${url.pathname.replace(/\/+$/, "").replace(/\/api\/v1$/, "")}`)
}

export const resolveConnection = (options: ConnectionOptions) =>
  Effect.gen(function*() {
    const configFile = yield* configFilePath
    const fromFile = yield* readConfigFile(configFile)
    const url = Option.firstSomeOf([
      sourced(Option.filter(options.url, (value) => !blank(value)), "--url"),
      sourced(yield* environment("CLARK_MARKETPLACE_URL"), "CLARK_MARKETPLACE_URL"),
      sourced(Option.filter(Option.fromNullable(fromFile.url), (value) => !blank(value)), `marketplace.url of ${configFile}`)
    ])
    const given = (token: Option.Option<Redacted.Redacted>) => Option.filter(token, (t) => !blank(Redacted.value(t)))
    const token = Option.firstSomeOf([
      given(options.token),
      given(yield* Config.option(Config.redacted("CLARK_MARKETPLACE_TOKEN"))),
      given(Option.fromNullable(fromFile.token))
    ])
    const baseUrl = yield* normalizeUrl(Option.getOrElse(url, () => ({ value: defaultMarketplaceUrl, from: "default" })))
    return { baseUrl, token, configFile } satisfies Connection
  }).pipe(
    Effect.catchIf(ConfigError.isConfigError, (error) => Effect.fail(marketFailure("invalid_config", String(error))))
  )
