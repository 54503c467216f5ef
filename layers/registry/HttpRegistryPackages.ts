/**
 * RegistryPackages over plain HTTP to the registry configured in `CC_REGISTRY_URL`. There is no default
 * registry: without the setting every request fails with RegistryNotConfigured, so a node never fetches
 * packages from a host nobody chose.
 *
 * The verified bytes come from Download.ts (shared with the marketplace's indexer); then they are unpacked
 * (Unpack.ts).
 */
import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option } from "effect"
import * as sigstore from "sigstore"
import { RegistryNotConfigured, TarballRefused } from "../../services/registry/RegistryErrors.js"
import { type RegistryPackage, RegistryPackages, type RegistryRequest } from "../../services/node/RegistryPackages.js"
import { abbreviatedAccept, download, type DownloadOptions } from "./Download.js"
import type { VerifyBundle } from "./Provenance.js"
import { defaultLimits, type Limits, unpackVerified } from "./Unpack.js"

export const registrySetting = "CC_REGISTRY_URL"

export interface Options {
  /** The registry's base URL; absent means no registry packages. */
  readonly registryUrl: Option.Option<URL>
  /** Tests lower these to try each limit on a small tarball. */
  readonly limits?: Partial<Limits>
  /** Sigstore's verification; tests replace it, since a real bundle needs Sigstore's live trust root. */
  readonly verifyBundle?: VerifyBundle
  /** Where Sigstore keeps its TUF trust root between runs (the node's data dir). */
  readonly tufCachePath?: string
  readonly timeouts?: { readonly document?: Duration.DurationInput; readonly tarball?: Duration.DurationInput }
}


export const sigstoreVerify = (tufCachePath: string | undefined): VerifyBundle => (bundle, key) =>
  sigstore.verify(bundle as sigstore.Bundle, {
    ...(tufCachePath === undefined ? {} : { tufCachePath }),
    tufForceCache: true,
    ...(key === undefined ? {} : { keySelector: () => key })
  })

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const limits: Limits = { ...defaultLimits, ...options.limits }
    const verifyBundle = options.verifyBundle ?? sigstoreVerify(options.tufCachePath)
    const documentTimeout = options.timeouts?.document ?? Duration.seconds(30)
    const tarballTimeout = options.timeouts?.tarball ?? Duration.minutes(5)

    const downloadOptions = (registryUrl: URL): DownloadOptions => ({
      registryUrl,
      limits,
      verifyBundle,
      documentTimeout,
      tarballTimeout,
      packumentAccept: abbreviatedAccept
    })

    const unpack = (request: RegistryRequest) =>
      Effect.gen(function*() {
        const base = yield* Option.match(options.registryUrl, {
          onNone: () => Effect.fail(new RegistryNotConfigured({ setting: registrySetting })),
          onSome: Effect.succeed
        })
        const { integrity, name, provenance, signatures, tarball, version } = yield* download(downloadOptions(base), request.name, request.version)
        const refuse = (reason: TarballRefused["reason"], at?: string, limit?: number) =>
          new TarballRefused({ name, version, reason, ...(at === undefined ? {} : { path: at }), ...(limit === undefined ? {} : { limit }) })
        yield* unpackVerified(tarball, request.into, limits, refuse)
        return { folder: request.into, name, version, integrity, signatures, provenance } satisfies RegistryPackage
      }).pipe(
        Effect.provideService(HttpClient.HttpClient, client),
        Effect.withSpan("RegistryPackages.unpack", { attributes: { name: request.name } })
      )

    return RegistryPackages.of({ unpack })
  })

/** The registry URL from `CC_REGISTRY_URL` (http or https); absent when unset. */
export const RegistryUrlConfig: Config.Config<Option.Option<URL>> = Config.option(
  Config.string(registrySetting).pipe(
    Config.mapOrFail((raw) => {
      const url = URL.canParse(raw) ? new URL(raw) : undefined
      return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
        ? Either.right(url)
        : Either.left(ConfigError.InvalidData([], "must be an http or https URL"))
    })
  )
)

/** Needs an HttpClient; `layerNode` brings Node's. */
export const layer = (options: Omit<Options, "registryUrl">) =>
  Layer.effect(RegistryPackages, Effect.flatMap(RegistryUrlConfig, (registryUrl) => make({ ...options, registryUrl })))

export const layerNode = (options: Omit<Options, "registryUrl">) => layer(options).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** With the registry given rather than read from the environment (`null`: none). */
export const layerNodeWith = (registryUrl: string | null, options: Omit<Options, "registryUrl">) =>
  Layer.effect(RegistryPackages, make({ ...options, registryUrl: Option.fromNullable(registryUrl === null ? null : new URL(registryUrl)) }))
    .pipe(Layer.provide(NodeHttpClient.layerUndici))
