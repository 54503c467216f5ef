/**
 * RegistryPackages over plain HTTP to the registry configured in `CC_REGISTRY_URL`. There is no default
 * registry: without the setting every request fails with RegistryNotConfigured, so a node never fetches
 * packages from a host nobody chose.
 *
 * Order of checks, each before anything later is spent: the version's signatures and provenance are about
 * its `dist.integrity`, so they are checked first; the tarball is hashed as it streams in and compared with
 * that integrity before one byte is decompressed; then it is unpacked (Unpack.ts).
 */
import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import * as sigstore from "sigstore"
import {
  IntegrityMismatch,
  PackageNotInRegistry,
  RegistryNotConfigured,
  RegistryUnavailable,
  SignatureInvalid,
  TarballRefused
} from "../../../services/node/PackageErrors.js"
import { type RegistryPackage, RegistryPackages, type RegistryRequest } from "../../../services/node/RegistryPackages.js"
import * as Fetch from "./Fetch.js"
import { type Chosen, choose, isNpmName, packumentPath, RegistryKeys } from "./Packument.js"
import { type VerifyBundle, verifyAttestations } from "./Provenance.js"
import { verifySignatures } from "./Signatures.js"
import { defaultLimits, integrityMatches, type Limits, sha512Of, unpackVerified } from "./Unpack.js"

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

const packumentAccept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
/** A packument of thousands of versions runs to a few MiB abbreviated; far beyond that is not a registry. */
const documentLimit = 32 * 1024 * 1024


const sigstoreVerify = (tufCachePath: string | undefined): VerifyBundle => (bundle, key) =>
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

    const unpack = (request: RegistryRequest) =>
      Effect.gen(function*() {
        const base = yield* Option.match(options.registryUrl, {
          onNone: () => Effect.fail(new RegistryNotConfigured({ setting: registrySetting })),
          onSome: Effect.succeed
        })
        const { name } = request
        if (!isNpmName(name)) return yield* new PackageNotInRegistry({ name })
        const at = (path: string) => new URL(path.replace(/^\/+/, ""), base.href.endsWith("/") ? base.href : `${base.href}/`)
        const document = (stage: Fetch.Stage, url: URL, accept = "application/json") =>
          Fetch.get({
            name,
            stage,
            url: url.href,
            accept,
            limit: documentLimit,
            timeout: documentTimeout,
            tooLarge: () => Effect.fail(new RegistryUnavailable({ name, stage, problem: "document too large" }))
          })
        const unexpected = (stage: Fetch.Stage, status: number) =>
          new RegistryUnavailable({ name, stage, status, problem: "unexpected status" })

        const packument = yield* document("packument", at(packumentPath(name)), packumentAccept)
        if (packument.status === 404) return yield* new PackageNotInRegistry({ name, ...(request.version === undefined ? {} : { version: request.version }) })
        if (packument.status !== 200) return yield* unexpected("packument", packument.status)
        const chosen: Chosen = yield* choose(name, request.version, packument.body)
        const { version } = chosen
        const integrity = sha512Of(chosen.dist.integrity)
        if (integrity === undefined) return yield* new IntegrityMismatch({ name, version, expected: "none", actual: "not downloaded" })

        // The registry's keys are read once per install, and only when something is signed.
        const needsKeys = (chosen.dist.signatures?.length ?? 0) > 0 || chosen.dist.attestations !== undefined
        const keys = needsKeys
          ? yield* Effect.gen(function*() {
            const fetched = yield* document("keys", at("-/npm/v1/keys"))
            if (fetched.status === 404) {
              return yield* new SignatureInvalid({ name, version, problem: "signed, but the registry publishes no keys" })
            }
            if (fetched.status !== 200) return yield* unexpected("keys", fetched.status)
            return yield* Schema.decodeUnknown(Schema.parseJson(RegistryKeys))(fetched.body.toString("utf8")).pipe(
              Effect.mapError(() => new RegistryUnavailable({ name, stage: "keys", problem: "keys document is malformed" }))
            )
          }).pipe(Effect.map((document) => document.keys))
          : []
        const signatures = yield* verifySignatures(name, chosen, integrity, keys)

        let provenance: RegistryPackage["provenance"] = "absent"
        if (chosen.dist.attestations !== undefined) {
          // As npm's client does, the attestations are read from the configured registry whatever host
          // the packument names: only the path is taken.
          const listed = yield* Effect.try({
            try: () => new URL(chosen.dist.attestations!.url, base),
            catch: () => new RegistryUnavailable({ name, stage: "attestations", problem: "attestations URL is malformed" })
          })
          const fetched = yield* document("attestations", at(listed.pathname + listed.search))
          if (fetched.status !== 200) return yield* unexpected("attestations", fetched.status)
          const parsed = yield* Effect.try({
            try: () => JSON.parse(fetched.body.toString("utf8")) as unknown,
            catch: () => new RegistryUnavailable({ name, stage: "attestations", problem: "attestations are not JSON" })
          })
          provenance = yield* verifyAttestations({ name, version, integrity, document: parsed, keys, verifyBundle })
        }

        const refuse = (reason: TarballRefused["reason"], at?: string, limit?: number) =>
          new TarballRefused({ name, version, reason, ...(at === undefined ? {} : { path: at }), ...(limit === undefined ? {} : { limit }) })
        const tarballUrl = yield* Effect.try({
          try: () => new URL(chosen.dist.tarball, base),
          catch: () => new RegistryUnavailable({ name, stage: "tarball", problem: "tarball URL is malformed" })
        })
        // The registry the person configured is the only host the node downloads from.
        if (tarballUrl.origin !== base.origin) {
          return yield* new RegistryUnavailable({ name, stage: "tarball", problem: "tarball is not on the configured registry" })
        }
        const hash = createHash("sha512")
        const tarball = yield* Fetch.get({
          name,
          stage: "tarball",
          url: tarballUrl.href,
          accept: "application/octet-stream",
          limit: limits.tarballBytes,
          timeout: tarballTimeout,
          tooLarge: () => Effect.fail(refuse("too-large", undefined, limits.tarballBytes)),
          onChunk: (chunk) => hash.update(chunk)
        })
        if (tarball.status === 404) return yield* new PackageNotInRegistry({ name, version })
        if (tarball.status !== 200) return yield* unexpected("tarball", tarball.status)
        const actual = hash.digest()
        if (!integrityMatches(integrity, actual)) {
          return yield* new IntegrityMismatch({ name, version, expected: integrity, actual: `sha512-${actual.toString("base64")}` })
        }
        yield* unpackVerified(tarball.body, request.into, limits, refuse)
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
