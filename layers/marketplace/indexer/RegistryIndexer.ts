/**
 * The Indexer over the configured npm registry: a job's version is downloaded and verified (Download.ts,
 * shared with the node), its tarball read within the package limits without touching disk, its manifest and
 * readme analysed (services/marketplace/Indexing.ts) and the result written through the catalogue importer.
 * Each replica runs a pool of workers over the shared queue and a scheduled re-check.
 */
import { HttpClient } from "@effect/platform"
import { Clock, Config, ConfigError, DateTime, Duration, Effect, Either, Layer, Option, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import * as os from "node:os"
import { type DownloadOptions, download, fullAccept } from "../../registry/Download.js"
import { sigstoreVerify } from "../../registry/HttpRegistryPackages.js"
import type { VerifyBundle } from "../../registry/Provenance.js"
import { fileTrustRoot, verifier } from "../../registry/Sigstore.js"
import { readTarball } from "../../registry/TarFiles.js"
import { defaultLimits, type Limits } from "../../registry/Unpack.js"
import { IndexedCatalog } from "../../../services/marketplace/IndexedCatalog.js"
import { type IndexOutcome, Indexer } from "../../../services/marketplace/Indexer.js"
import {
  analyse,
  backoff,
  defaultRetryPolicy,
  describeFailure,
  type IndexFailure,
  isTransient,
  type RetryPolicy,
  similarNames
} from "../../../services/marketplace/Indexing.js"
import { type ClaimedJob, IndexQueue } from "../../../services/marketplace/IndexQueue.js"
import { ManifestInvalid } from "../../../services/node/PackageErrors.js"
import { RegistryNotConfigured, TarballRefused } from "../../../services/registry/RegistryErrors.js"

export const registrySetting = "MARKETPLACE_REGISTRY_URL"

export interface IndexerOptions {
  /** The registry's base URL; absent: every job fails with "no registry is configured". */
  readonly registryUrl: Option.Option<URL>
  /** Workers per replica; 0 runs none (jobs wait for a replica that has some, or for `drain`). */
  readonly workers: number
  /** How long an idle worker waits before asking the queue again. */
  readonly pollInterval: Duration.DurationInput
  /** How often this replica queues the re-check of every indexed package; none when absent. */
  readonly recheckInterval: Option.Option<Duration.DurationInput>
  /** How long a claimed job is a worker's before another replica may take it (a crash mid-way). */
  readonly leaseMillis: number
  readonly retry: RetryPolicy
  readonly limits?: Partial<Limits>
  /** Sigstore's verification against its TUF trust root unless given (a trusted-root file: `trustedRootSetting`). */
  readonly verifyBundle?: VerifyBundle
}

const isReadme = (path: string) => /^readme(?:\.(?:md|markdown|txt))?$/i.test(path)

const noTimings = { fetch: 0, verify: 0, unpack: 0, store: 0 }

export const make = (options: IndexerOptions) =>
  Effect.gen(function*() {
    const queue = yield* IndexQueue
    const catalog = yield* IndexedCatalog
    const client = yield* HttpClient.HttpClient
    const limits: Limits = { ...defaultLimits, ...options.limits }
    const verifyBundle = options.verifyBundle ?? sigstoreVerify(undefined)

    /** Indexes the job's version; `unchanged` when the catalogue holds these bytes already. */
    const index = (job: ClaimedJob) =>
      Effect.gen(function*() {
        const timings = { ...noTimings }
        const unchanged = (version: string) => ({ result: "unchanged" as const, version, timings })
        const force = job.reason === "reindex"
        if (job.requested !== undefined && !force && (yield* catalog.indexedIntegrity(job.packageName, job.requested)) !== undefined) {
          return unchanged(job.requested)
        }
        const registryUrl = yield* Option.match(options.registryUrl, {
          onNone: () => Effect.fail(new RegistryNotConfigured({ setting: registrySetting })),
          onSome: Effect.succeed
        })
        const downloadOptions: DownloadOptions = {
          registryUrl,
          limits,
          verifyBundle,
          documentTimeout: Duration.seconds(30),
          tarballTimeout: Duration.minutes(5),
          packumentAccept: fullAccept
        }
        const downloaded = yield* download(downloadOptions, job.packageName, job.requested)
        timings.fetch = downloaded.timings.fetch
        timings.verify = downloaded.timings.verify
        const { name, version } = downloaded
        if (!force && (yield* catalog.indexedIntegrity(name, version)) === downloaded.integrity) return unchanged(version)

        const unpackStarted = performance.now()
        const refuse = (reason: TarballRefused["reason"], at?: string, limit?: number) =>
          new TarballRefused({ name, version, reason, ...(at === undefined ? {} : { path: at }), ...(limit === undefined ? {} : { limit }) })
        const listing = yield* readTarball(downloaded.tarball, limits, refuse, (path) => path === "package.json" || isReadme(path))
        const manifestBytes = listing.kept.get("package.json")
        if (manifestBytes === undefined) return yield* new ManifestInvalid({ path: "", problem: "the tarball has no package.json" })
        const packageJson = yield* Effect.try({
          try: () => JSON.parse(manifestBytes.toString("utf8")) as unknown,
          catch: () => new ManifestInvalid({ path: "", problem: "package.json is not JSON" })
        })
        const readmePath = [...listing.kept.keys()].find(isReadme)
        const similar = similarNames(name, yield* catalog.namesNear(name))
        const analysis = yield* Either.match(analyse({
          packageJson,
          readme: readmePath === undefined ? undefined : listing.kept.get(readmePath)!.toString("utf8"),
          files: listing.files,
          verified: downloaded,
          similar
        }), { onLeft: Effect.fail, onRight: Effect.succeed })
        // The tarball's own package.json must be the version the registry listed, or the listing would lie.
        if (analysis.manifest.name !== name || analysis.manifest.version !== version) {
          return yield* new ManifestInvalid({ path: "", problem: "package.json names another package or version than the registry" })
        }
        timings.unpack = performance.now() - unpackStarted

        const storeStarted = performance.now()
        const indexedAt = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
        const publishedAt = Option.match(downloaded.chosen.published, { onNone: () => indexedAt, onSome: (at) => at.toISOString() })
        yield* catalog.write({
          name,
          displayName: analysis.displayName,
          description: analysis.description,
          keywords: analysis.keywords,
          homepage: analysis.homepage,
          repositoryUrl: analysis.repositoryUrl,
          license: analysis.license,
          initialStatus: analysis.initialStatus,
          version: { ...analysis.version, publishedAt, indexedAt }
        })
        timings.store = performance.now() - storeStarted
        return { result: "indexed" as const, version, timings }
      }).pipe(Effect.provideService(HttpClient.HttpClient, client))

    const run = (job: ClaimedJob, worker: string): Effect.Effect<IndexOutcome> =>
      index(job).pipe(
        Effect.flatMap((done) =>
          Effect.as(queue.finish(job, worker, done.version), { job: job.id, packageName: job.packageName, ...done })
        ),
        Effect.catchAll((error: IndexFailure) =>
          Effect.gen(function*() {
            const message = describeFailure(error)
            const wait = isTransient(error) ? backoff(options.retry, job.attempts) : undefined
            const base = { job: job.id, packageName: job.packageName, error: message, timings: noTimings }
            if (wait === undefined) {
              yield* queue.fail(job, worker, message)
              yield* Effect.logWarning("indexing failed", { package: job.packageName, error: message })
              return { ...base, result: "failed" as const }
            }
            yield* queue.retry(job, worker, message, (yield* Clock.currentTimeMillis) + wait)
            return { ...base, result: "retry" as const }
          })
        ),
        // A defect (the database, a bug) is retried like an unreachable registry, and logged with its cause.
        Effect.catchAllCause((cause) =>
          Effect.gen(function*() {
            yield* Effect.logError("indexing defect", cause)
            const message = "the indexer failed unexpectedly"
            const wait = backoff(options.retry, job.attempts)
            if (wait === undefined) yield* queue.fail(job, worker, message)
            else yield* queue.retry(job, worker, message, (yield* Clock.currentTimeMillis) + wait)
            return {
              job: job.id,
              packageName: job.packageName,
              result: wait === undefined ? "failed" as const : "retry" as const,
              error: message,
              timings: noTimings
            }
          })
        ),
        Effect.withSpan("Indexer.run", { attributes: { package: job.packageName } })
      )

    const runOnce: Indexer["Type"]["runOnce"] = (worker) =>
      queue.claim(worker, options.leaseMillis).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(Option.none<IndexOutcome>()),
          onSome: (job) => Effect.map(run(job, worker), Option.some)
        }))
      )

    const drain: Indexer["Type"]["drain"] = Effect.gen(function*() {
      const worker = `drain-${randomBytes(6).toString("hex")}`
      const outcomes: Array<IndexOutcome> = []
      while (true) {
        const next = yield* runOnce(worker)
        if (Option.isNone(next)) return outcomes
        outcomes.push(next.value)
      }
    })

    return Indexer.of({ runOnce, drain, recheck: queue.queueRechecks })
  })

/** The indexer alone, without workers: for `drain`, the CLI and tests. */
export const layer = (options: IndexerOptions) => Layer.effect(Indexer, make(options))

/**
 * The indexer with this replica's workers and re-check running in the layer's scope: they stop with it, and
 * a job a stopped worker held is taken again by any replica once its lease expires.
 */
export const layerWorkers = (options: IndexerOptions) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const indexer = yield* Indexer
    const replica = `${os.hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`
    for (let i = 0; i < options.workers; i++) {
      const worker = `${replica}-${i}`
      yield* indexer.runOnce(worker).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.sleep(options.pollInterval), onSome: () => Effect.void })),
        // The queue unreachable (the database restarting) pauses the worker; it never ends it.
        Effect.catchAllCause((cause) => Effect.zipRight(Effect.logError("indexer worker", cause), Effect.sleep(options.pollInterval))),
        Effect.forever,
        Effect.forkScoped
      )
    }
    if (Option.isSome(options.recheckInterval) && options.workers > 0) {
      yield* indexer.recheck.pipe(
        Effect.tap((queued) => Effect.logInfo("re-check queued", { packages: queued })),
        // A failed round (the database restarting) is logged; the schedule goes on to the next one.
        Effect.catchAllCause((cause) => Effect.logError("indexer re-check", cause)),
        Effect.schedule(Schedule.spaced(options.recheckInterval.value)),
        Effect.forkScoped
      )
    }
  })).pipe(Layer.provideMerge(layer(options)))

const positiveDuration = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((raw) => {
      if (raw === "off") return Either.right(Option.none<Duration.Duration>())
      const parsed = Duration.decodeUnknown(raw)
      return Option.isSome(parsed) && Duration.greaterThan(parsed.value, Duration.zero)
        ? Either.right(Option.some(parsed.value))
        : Either.left(ConfigError.InvalidData([name], "must be a duration such as \"6 hours\", or off"))
    })
  )

/**
 * The indexer's settings (README, "Settings"): `MARKETPLACE_REGISTRY_URL` (no default: without it every job
 * fails saying so), `MARKETPLACE_INDEXER_WORKERS` (default 2), `MARKETPLACE_INDEXER_RECHECK` (default
 * "6 hours", or off), `MARKETPLACE_SIGSTORE_TRUSTED_ROOT` (default none: Sigstore's own root through TUF).
 */
/** A Sigstore `trusted_root.json` to verify provenance against instead of Sigstore's own (as the node's setting). */
export const trustedRootSetting = "MARKETPLACE_SIGSTORE_TRUSTED_ROOT"

export const IndexerConfig: Config.Config<IndexerOptions> = Config.all({
  registryUrl: Config.option(
    Config.string(registrySetting).pipe(
      Config.mapOrFail((raw) => {
        const url = URL.canParse(raw) ? new URL(raw) : undefined
        return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
          ? Either.right(url)
          : Either.left(ConfigError.InvalidData([registrySetting], "must be an http or https URL"))
      })
    )
  ),
  // Validated before the default is applied: after it, a refusal no longer names the setting.
  workers: Config.integer("MARKETPLACE_INDEXER_WORKERS").pipe(
    Config.validate({ message: "must be 0-32", validation: (n) => n >= 0 && n <= 32 }),
    Config.withDefault(2)
  ),
  recheckInterval: positiveDuration("MARKETPLACE_INDEXER_RECHECK", "6 hours"),
  trustedRoot: Config.option(
    Config.string(trustedRootSetting).pipe(Config.validate({ message: "must name a file", validation: (file) => file.length > 0 }))
  )
}).pipe(Config.map(({ trustedRoot, ...read }) => ({
  ...read,
  // The same verification against another root, e.g. a private Sigstore deployment's (layers/registry/Sigstore.ts).
  ...Option.match(trustedRoot, { onNone: () => ({}), onSome: (file) => ({ verifyBundle: verifier(fileTrustRoot(file)) }) }),
  pollInterval: Duration.seconds(2),
  leaseMillis: 10 * 60_000,
  retry: defaultRetryPolicy
})))
