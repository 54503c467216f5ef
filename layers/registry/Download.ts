/**
 * A version's verified bytes from the configured registry, shared by the node's installer and the
 * marketplace's indexer. Order of checks, each before anything later is spent: the version's signatures and
 * provenance are about its `dist.integrity`, so they are checked first; the tarball is hashed as it streams
 * in and compared with that integrity before anyone decompresses a byte.
 */
import { HttpClient } from "@effect/platform"
import { type Duration, Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import {
  IntegrityMismatch,
  PackageNotInRegistry,
  RegistryUnavailable,
  SignatureInvalid,
  TarballRefused
} from "../../services/registry/RegistryErrors.js"
import * as Fetch from "./Fetch.js"
import { type Chosen, choose, isNpmName, packumentPath, RegistryKeys } from "./Packument.js"
import { type VerifyBundle, verifyAttestations } from "./Provenance.js"
import { verifySignatures } from "./Signatures.js"
import { integrityMatches, type Limits, sha512Of } from "./Unpack.js"

export interface DownloadOptions {
  readonly registryUrl: URL
  readonly limits: Limits
  readonly verifyBundle: VerifyBundle
  readonly documentTimeout: Duration.DurationInput
  readonly tarballTimeout: Duration.DurationInput
  /** The node asks for the abbreviated packument; the indexer for the full one (publish times, all versions). */
  readonly packumentAccept: string
}

export interface Downloaded {
  readonly name: string
  readonly version: string
  readonly chosen: Chosen
  /** The packument's `dist.integrity` (`sha512-…`), verified on the downloaded bytes. */
  readonly integrity: string
  readonly signatures: "verified" | "absent"
  readonly provenance: "verified" | "absent"
  readonly tarball: Buffer
  /** Wall milliseconds spent on the network and on verification (benchmarks split them). */
  readonly timings: { readonly fetch: number; readonly verify: number }
}

export const abbreviatedAccept = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
export const fullAccept = "application/json"

/** A packument of thousands of versions runs to a few MiB abbreviated; far beyond that is not a registry. */
const documentLimit = 32 * 1024 * 1024

export const download = (options: DownloadOptions, name: string, requested: string | undefined) =>
  Effect.gen(function*() {
    const base = options.registryUrl
    const limits = options.limits
    const timings = { fetch: 0, verify: 0 }
    const timed = <A, E, R>(stage: keyof typeof timings, effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const started = performance.now()
        return Effect.ensuring(effect, Effect.sync(() => void (timings[stage] += performance.now() - started)))
      })
    if (!isNpmName(name)) return yield* new PackageNotInRegistry({ name })
    const at = (path: string) => new URL(path.replace(/^\/+/, ""), base.href.endsWith("/") ? base.href : `${base.href}/`)
    const document = (stage: Fetch.Stage, url: URL, accept = "application/json") =>
      timed("fetch", Fetch.get({
        name,
        stage,
        url: url.href,
        accept,
        limit: documentLimit,
        timeout: options.documentTimeout,
        tooLarge: () => Effect.fail(new RegistryUnavailable({ name, stage, problem: "document too large" }))
      }))
    const unexpected = (stage: Fetch.Stage, status: number) =>
      new RegistryUnavailable({ name, stage, status, problem: "unexpected status" })

    const packument = yield* document("packument", at(packumentPath(name)), options.packumentAccept)
    if (packument.status === 404) return yield* new PackageNotInRegistry({ name, ...(requested === undefined ? {} : { version: requested }) })
    if (packument.status !== 200) return yield* unexpected("packument", packument.status)
    const chosen: Chosen = yield* choose(name, requested, packument.body)
    const { version } = chosen
    const integrity = sha512Of(chosen.dist.integrity)
    if (integrity === undefined) return yield* new IntegrityMismatch({ name, version, expected: "none", actual: "not downloaded" })

    // The registry's keys are read once per download, and only when something is signed.
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
    const signatures = yield* timed("verify", verifySignatures(name, chosen, integrity, keys))

    let provenance: Downloaded["provenance"] = "absent"
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
      provenance = yield* timed("verify", verifyAttestations({ name, version, integrity, document: parsed, keys, verifyBundle: options.verifyBundle }))
    }

    const tarballUrl = yield* Effect.try({
      try: () => new URL(chosen.dist.tarball, base),
      catch: () => new RegistryUnavailable({ name, stage: "tarball", problem: "tarball URL is malformed" })
    })
    // The configured registry is the only host packages are downloaded from.
    if (tarballUrl.origin !== base.origin) {
      return yield* new RegistryUnavailable({ name, stage: "tarball", problem: "tarball is not on the configured registry" })
    }
    const hash = createHash("sha512")
    const tarball = yield* timed("fetch", Fetch.get({
      name,
      stage: "tarball",
      url: tarballUrl.href,
      accept: "application/octet-stream",
      limit: limits.tarballBytes,
      timeout: options.tarballTimeout,
      tooLarge: () => Effect.fail(new TarballRefused({ name, version, reason: "too-large", limit: limits.tarballBytes })),
      onChunk: (chunk) => hash.update(chunk)
    }))
    if (tarball.status === 404) return yield* new PackageNotInRegistry({ name, version })
    if (tarball.status !== 200) return yield* unexpected("tarball", tarball.status)
    const actual = yield* timed("verify", Effect.sync(() => hash.digest()))
    if (!integrityMatches(integrity, actual)) {
      return yield* new IntegrityMismatch({ name, version, expected: integrity, actual: `sha512-${actual.toString("base64")}` })
    }
    return { name, version, chosen, integrity, signatures, provenance, tarball: tarball.body, timings } satisfies Downloaded
  }).pipe(Effect.withSpan("Registry.download", { attributes: { name } }))

export type DownloadRequirements = HttpClient.HttpClient
