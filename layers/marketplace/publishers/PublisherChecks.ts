/**
 * PublisherChecks over the world: the well-known file (WellKnown.ts), the DNS TXT record through the
 * resolver, and the registry's full packument (its `maintainers` and the latest version's `clark.publisher`)
 * from `MARKETPLACE_REGISTRY_URL`, read within a byte limit and a deadline by the registry client.
 */
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import * as Fetch from "../../registry/Fetch.js"
import { isNpmName, packumentPath } from "../../registry/Packument.js"
import {
  ClaimTargetNotFound,
  dnsName,
  PublisherChecks,
  type RegistryFacts,
  RegistryUnreachable,
  txtHoldsToken,
  VerificationFailed
} from "../../../services/marketplace/Publishers.js"
import { RegistryUnavailable } from "../../../services/registry/RegistryErrors.js"
import { PublisherResolver, layerSystem } from "./Resolver.js"
import { checkTimeout, checkWellKnown, type WellKnownOptions } from "./WellKnown.js"

export const checkDns = (resolver: PublisherResolver["Type"], timeout: Duration.DurationInput = checkTimeout) =>
(homepage: URL, token: string) => {
  const name = dnsName(homepage)
  const failed = (problem: string) => new VerificationFailed({ method: "dns", problem })
  return resolver.txt(name).pipe(
    Effect.mapError((code) => failed(code === "ENOTFOUND" || code === "ENODATA" ? `no TXT record at ${name}` : `the TXT lookup of ${name} failed (${code})`)),
    Effect.filterOrFail((records) => txtHoldsToken(records, token), () => failed(`no TXT record at ${name} is the token`)),
    Effect.asVoid,
    Effect.timeoutFail({ duration: timeout, onTimeout: () => failed(`the TXT lookup of ${name} did not answer in time`) })
  )
}

/** A full packument a claim reads: only what it needs, the rest ignored. */
const ClaimPackument = Schema.Struct({
  name: Schema.String,
  "dist-tags": Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  versions: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  maintainers: Schema.optional(Schema.Array(Schema.Unknown))
})

/** The facts of a packument's bytes; pure, for the table test. */
export const registryFacts = (name: string, body: Buffer): Option.Option<RegistryFacts> => {
  let json: unknown
  try {
    json = JSON.parse(body.toString("utf8"))
  } catch {
    return Option.none()
  }
  const decoded = Schema.decodeUnknownOption(ClaimPackument)(json)
  if (Option.isNone(decoded) || decoded.value.name !== name) return Option.none()
  const packument = decoded.value
  const latest = packument["dist-tags"]?.latest
  const manifest = latest === undefined ? undefined : packument.versions[latest] as { clark?: { publisher?: unknown } } | undefined
  const publisher = manifest?.clark?.publisher
  const maintainerEmails = (packument.maintainers ?? []).flatMap((entry) => {
    const email = (entry as { email?: unknown } | null)?.email
    return typeof email === "string" ? [email] : []
  })
  return Option.some({ manifestPublisher: typeof publisher === "string" ? publisher : undefined, maintainerEmails })
}

/** A packument is a few MiB at most for a package with thousands of versions. */
const packumentLimit = 32 * 1024 * 1024

export const registryLookup = (registryUrl: Option.Option<URL>, timeout: Duration.DurationInput = Duration.seconds(30)) =>
(packageName: string): Effect.Effect<RegistryFacts, ClaimTargetNotFound | RegistryUnreachable, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const base = yield* Option.match(registryUrl, {
      onNone: () => Effect.fail(new RegistryUnreachable({ problem: "no registry is configured (MARKETPLACE_REGISTRY_URL)" })),
      onSome: Effect.succeed
    })
    if (!isNpmName(packageName)) return yield* new ClaimTargetNotFound({ packageName, where: "registry" })
    const url = new URL(packumentPath(packageName), base.href.endsWith("/") ? base.href : `${base.href}/`)
    const fetched = yield* Fetch.get({
      name: packageName,
      stage: "packument",
      url: url.href,
      accept: "application/json",
      limit: packumentLimit,
      timeout,
      tooLarge: () => Effect.fail(new RegistryUnavailable({ name: packageName, stage: "packument", problem: "document too large" }))
    }).pipe(Effect.mapError((error) => new RegistryUnreachable({ problem: `the registry's packument: ${error.problem}` })))
    if (fetched.status === 404) return yield* new ClaimTargetNotFound({ packageName, where: "registry" })
    if (fetched.status !== 200) return yield* new RegistryUnreachable({ problem: `the registry answered ${fetched.status}` })
    return yield* Option.match(registryFacts(packageName, fetched.body), {
      onNone: () => Effect.fail(new RegistryUnreachable({ problem: "the registry's packument is not readable" })),
      onSome: Effect.succeed
    })
  })

/**
 * `MARKETPLACE_REGISTRY_URL`, read as the indexer reads it (layers/marketplace/indexer/RegistryIndexer.ts),
 * without loading the indexer's module into every server: the server loads that only with its workers.
 */
const registryUrlConfig: Config.Config<Option.Option<URL>> = Config.option(
  Config.string("MARKETPLACE_REGISTRY_URL").pipe(
    Config.mapOrFail((raw) => {
      const url = URL.canParse(raw) ? new URL(raw) : undefined
      return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
        ? Either.right(url)
        : Either.left(ConfigError.InvalidData(["MARKETPLACE_REGISTRY_URL"], "must be an http or https URL"))
    })
  )
)

export interface ChecksOptions extends Omit<WellKnownOptions, "resolver"> {
  readonly registryUrl: Option.Option<URL>
}

/** The checks with these options, over the resolver and HTTP client (the registry's) of the context. */
export const make = (options: ChecksOptions) =>
  Effect.gen(function*() {
    const resolver = yield* PublisherResolver
    const context = yield* Effect.context<HttpClient.HttpClient>()
    return PublisherChecks.of({
      wellKnown: checkWellKnown({ ...options, resolver }),
      dns: checkDns(resolver, options.timeout),
      registry: (packageName) => Effect.provide(registryLookup(options.registryUrl)(packageName), context)
    })
  })

/** Needs the resolver: `Resolver.layerSystem`, or a test's. */
export const layer = (options: ChecksOptions): Layer.Layer<PublisherChecks, never, PublisherResolver> =>
  Layer.effect(PublisherChecks, make(options)).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** The checks from the environment: the system resolver, Node's certificate roots, the indexer's registry URL. */
export const layerFromConfig = Layer.unwrapEffect(
  Effect.map(Effect.orDie(registryUrlConfig), (registryUrl) => layer({ registryUrl }).pipe(Layer.provide(layerSystem)))
)
