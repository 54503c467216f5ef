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
import { RegistryNotConfigured, TarballRefused } from "../../services/registry/RegistryErrors.js"
import { type RegistryPackage, RegistryPackages, type RegistryRequest } from "../../services/node/RegistryPackages.js"
import { abbreviatedAccept, download, type DownloadOptions } from "./Download.js"
import type { VerifyBundle } from "./Provenance.js"
import { fileTrustRoot, tufTrustRoot, verifier } from "./Sigstore.js"
import { defaultLimits, type Limits, unpackVerified } from "./Unpack.js"

export const registrySetting = "CC_REGISTRY_URL"
/** A trusted-root JSON file to verify provenance against instead of Sigstore's TUF root (see Sigstore.ts). */
export const trustedRootSetting = "CC_SIGSTORE_TRUSTED_ROOT"

export interface Options {
  /** The registry's base URL; absent means no registry packages. */
  readonly registryUrl: Option.Option<URL>
  /** Tests lower these to try each limit on a small tarball. */
  readonly limits?: Partial<Limits>
  /** Replaces Sigstore's verification whole (tests that only look at what reaches the verifier). */
  readonly verifyBundle?: VerifyBundle
  /** Where Sigstore keeps its TUF trust root between runs (the node's data dir). */
  readonly tufCachePath?: string
  /**
   * A trusted-root JSON file used instead of Sigstore's TUF root; the verification is the same
   * (`CC_SIGSTORE_TRUSTED_ROOT` when the layer reads the environment; unset: TUF).
   */
  readonly trustedRootPath?: string
  readonly timeouts?: { readonly document?: Duration.DurationInput; readonly tarball?: Duration.DurationInput }
}

/** Sigstore's verification against its TUF trust root, as `sigstore.verify` with `tufForceCache` does it. */
export const sigstoreVerify = (tufCachePath: string | undefined): VerifyBundle => verifier(tufTrustRoot(tufCachePath))

export const make = (options: Options) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const limits: Limits = { ...defaultLimits, ...options.limits }
    const verifyBundle = options.verifyBundle ??
      (options.trustedRootPath === undefined ? sigstoreVerify(options.tufCachePath) : verifier(fileTrustRoot(options.trustedRootPath)))
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

/** The trusted-root file from `CC_SIGSTORE_TRUSTED_ROOT`; absent when unset (Sigstore's TUF root is used). */
export const TrustedRootConfig: Config.Config<Option.Option<string>> = Config.option(
  Config.string(trustedRootSetting).pipe(Config.validate({ message: "must name a file", validation: (file) => file.length > 0 }))
)

/** The options with `trustedRootPath` from the environment unless given. */
const withTrustedRoot = <O extends { readonly trustedRootPath?: string }>(options: O) =>
  options.trustedRootPath !== undefined
    ? Effect.succeed(options)
    : Effect.map(TrustedRootConfig, Option.match({ onNone: () => options, onSome: (trustedRootPath) => ({ ...options, trustedRootPath }) }))

/** Needs an HttpClient; `layerNode` brings Node's. */
export const layer = (options: Omit<Options, "registryUrl">) =>
  Layer.effect(
    RegistryPackages,
    Effect.flatMap(Effect.zip(RegistryUrlConfig, withTrustedRoot(options)), ([registryUrl, given]) => make({ ...given, registryUrl }))
  )

export const layerNode = (options: Omit<Options, "registryUrl">) => layer(options).pipe(Layer.provide(NodeHttpClient.layerUndici))

/** With the registry given rather than read from the environment (`null`: none). */
export const layerNodeWith = (registryUrl: string | null, options: Omit<Options, "registryUrl">) =>
  Layer.effect(
    RegistryPackages,
    Effect.flatMap(withTrustedRoot(options), (given) =>
      make({ ...given, registryUrl: Option.fromNullable(registryUrl === null ? null : new URL(registryUrl)) }))
  )
    .pipe(Layer.provide(NodeHttpClient.layerUndici))
