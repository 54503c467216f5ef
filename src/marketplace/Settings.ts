/** Settings of the marketplace server, read from the environment. */
import { Config, ConfigError, Context, Either, Layer, Option } from "effect"
import type { Environment } from "../../schema/marketplace/System.js"
import { defaultRateLimits, parseTrustedProxies, type RateLimitSettings } from "../../services/marketplace/RateLimits.js"

export interface SettingsShape {
  readonly environment: Environment
  /** Where clients reach this API; OAuth access tokens must name `<publicOrigin>/api/v1` as their audience. */
  readonly publicOrigin: string
  /** The website whose pages may make cookie-authenticated changes. */
  readonly siteOrigin: string
  /** Whether package reads are served from memory until the catalogue changes. */
  readonly readCache: boolean
}

export class Settings extends Context.Tag("clark/marketplace/Settings")<Settings, SettingsShape>() {}

/** The audience OAuth access tokens must carry to be accepted here. */
export const apiAudience = (settings: SettingsShape) => `${settings.publicOrigin}/api/v1`

/** An origin exactly as browsers send it: scheme, host and port, no path or trailing slash. */
const origin = (name: string) =>
  Config.string(name).pipe(
    Config.mapOrFail((value) => {
      const parsed = Either.try(() => new URL(value))
      return Either.isRight(parsed) && parsed.right.origin === value && value !== "null"
        ? Either.right(value)
        : Either.left(ConfigError.InvalidData([name], `Expected an origin such as https://example.com, got ${value}`))
    })
  )

/**
 * The origin a server bound to `host` and `port` is reached at: IPv6 addresses in
 * brackets, and the wildcard addresses (every interface) as `localhost`, the one
 * name that surely reaches them from the machine itself.
 */
export const listenOrigin = (host: string, port: number): string => {
  const name = host === "0.0.0.0" || host === "::" || host === "" ? "localhost" : host.includes(":") ? `[${host}]` : host
  // Normalised as browsers send it (port 80 is no port).
  return new URL(`http://${name}:${port}`).origin
}

/** Where `clark marketplace serve` listens when given no flags: MARKETPLACE_HOST and MARKETPLACE_PORT. */
export const ListenConfig = Config.all({
  host: Config.string("MARKETPLACE_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("MARKETPLACE_PORT").pipe(Config.withDefault(8787))
})

/**
 * The settings, with the public origin defaulting to `boundOrigin` (the address
 * the server is bound to), else to the address MARKETPLACE_HOST and
 * MARKETPLACE_PORT name: a server started on another port without
 * MARKETPLACE_PUBLIC_ORIGIN accepts OAuth tokens for the address it answers at.
 */
export const settingsConfig = (boundOrigin?: string): Config.Config<SettingsShape> =>
  Config.all({
    environment: Config.literal("development", "staging", "production")("MARKETPLACE_ENVIRONMENT").pipe(
      Config.withDefault("development" as const)
    ),
    // Config.option falls back only when the variable is missing: set but invalid still fails.
    publicOrigin: boundOrigin === undefined
      ? Config.zipWith(
        Config.option(origin("MARKETPLACE_PUBLIC_ORIGIN")),
        ListenConfig,
        (set, { host, port }) => Option.getOrElse(set, () => listenOrigin(host, port))
      )
      : Config.map(Config.option(origin("MARKETPLACE_PUBLIC_ORIGIN")), Option.getOrElse(() => boundOrigin)),
    siteOrigin: origin("MARKETPLACE_SITE_ORIGIN").pipe(Config.option),
    readCache: Config.literal("on", "off")("MARKETPLACE_READ_CACHE").pipe(Config.withDefault("on" as const))
  }).pipe(
    Config.map(({ environment, publicOrigin, readCache, siteOrigin }) => ({
      environment,
      publicOrigin,
      siteOrigin: siteOrigin._tag === "Some" ? siteOrigin.value : publicOrigin,
      readCache: readCache === "on"
    }))
  )

export const SettingsConfig: Config.Config<SettingsShape> = settingsConfig()

export const layer = Layer.effect(Settings, SettingsConfig)

/** Rate limits (services/marketplace/RateLimits.ts), a Tag of their own so the settings above stay as they are. */
export class RateLimits extends Context.Tag("clark/marketplace/RateLimitSettings")<RateLimits, RateLimitSettings>() {}

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `Expected a whole number of at least 1`, validation: (n) => n >= 1 }),
    Config.withDefault(fallback)
  )

export const RateLimitsConfig: Config.Config<RateLimitSettings> = Config.all({
  enabled: Config.literal("on", "off")("MARKETPLACE_RATE_LIMITS").pipe(
    Config.withDefault("on" as const),
    Config.map((value) => value === "on")
  ),
  publicLimit: positive("MARKETPLACE_RATE_LIMIT_PUBLIC", defaultRateLimits.publicLimit),
  authenticatedLimit: positive("MARKETPLACE_RATE_LIMIT_AUTHENTICATED", defaultRateLimits.authenticatedLimit),
  windowSeconds: positive("MARKETPLACE_RATE_LIMIT_WINDOW_SECONDS", defaultRateLimits.windowSeconds),
  trustedProxies: Config.string("MARKETPLACE_TRUSTED_PROXIES").pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) => {
      const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
      return Either.match(parseTrustedProxies(entries), {
        onLeft: (message) => Either.left(ConfigError.InvalidData(["MARKETPLACE_TRUSTED_PROXIES"], message)),
        onRight: () => Either.right(entries)
      })
    })
  ),
  store: Config.literal("shared", "per-replica")("MARKETPLACE_RATE_LIMIT_STORE").pipe(
    Config.withDefault("shared" as const)
  )
})

export const rateLimitsLayer = Layer.effect(RateLimits, RateLimitsConfig)
