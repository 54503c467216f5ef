/**
 * The Installer over the directory, the package folders, the package records and the preferences. Expiries
 * of waiting approvals are fibers in a FiberMap keyed by approval id, restored from the records at start.
 */
import { Clock, DateTime, Duration, Effect, Either, FiberMap, Layer, Option, Schema } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Decision } from "../../../schema/node/Work.js"
import type { InstallApproval, Installed, InstallRequest, Listing } from "../../../schema/node/Package.js"
import { InstallMode } from "../../../schema/node/Preferences.js"
import {
  approvalLifetimeMillis,
  type Asker,
  Installer,
  type InstallOutcome
} from "../../../services/node/Installer.js"
import {
  decideInstall,
  defaultInstallMode,
  riskTier,
  stillPublished,
  undeclaredReach
} from "../../../services/node/InstallPolicy.js"
import { readPackageJson } from "../../../services/node/Manifest.js"
import { PackageDirectory } from "../../../services/node/PackageDirectory.js"
import {
  ApprovalAlreadyDecided,
  type ApprovalError,
  ApprovalExpired,
  ApprovalForged,
  ApprovalNotFound,
  DeclaredReachMismatch,
  DigestMismatch,
  type InstallError,
  InstallPolicyRefused,
  InstallRequestInvalid,
  ManifestInvalid,
  PackageCacheUnavailable,
  PackageNotListed
} from "../../../services/node/PackageErrors.js"
import { RegistryPackages } from "../../../services/node/RegistryPackages.js"
import { PackageFolders } from "../../../services/node/PackageFolders.js"
import { type ApprovalRecord, PackageRecords } from "../../../services/node/PackageRecords.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"

export const installModeKey = "execution.installs"

const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

/** What the person is asked to approve, as one digest: the package, its version and its exact bytes. */
export const operationDigest = (packageId: string, version: string, contentDigest: string) =>
  `sha256:${createHash("sha256").update(JSON.stringify(["install", packageId, version, contentDigest])).digest("hex")}`

const toWire = ({ contentDigest: _c, digest: _d, ...approval }: ApprovalRecord): InstallApproval => ({
  ...approval,
  kind: "install-approval"
})

export interface Options {
  /** Where registry packages are unpacked before their copy into the cache (the node's data dir). */
  readonly stagingDir: string
}

export const make = (options: Options) => Effect.gen(function*() {
  const directory = yield* PackageDirectory
  const registry = yield* RegistryPackages
  const folders = yield* PackageFolders
  const records = yield* PackageRecords
  const preferences = yield* PreferenceStore
  const expiries = yield* FiberMap.make<string>()

  const installMode = Effect.map(preferences.get(installModeKey), (stored) =>
    Option.getOrElse(
      Option.flatMap(stored, (state) => Option.getRight(Schema.decodeUnknownEither(InstallMode)(state.value))),
      () => defaultInstallMode
    ))

  /**
   * A registry package: unpacked into a staging folder of its own (integrity checked on the bytes first),
   * its integrity the one the listing showed, its content digest the one approved (`boundTo`, when deciding),
   * then copied into the cache like a folder. The staging folder never outlives the call.
   */
  const fromRegistry = (listing: Listing, boundTo: string | undefined) => {
    const staging = path.join(options.stagingDir, randomBytes(8).toString("hex"))
    return Effect.gen(function*() {
      yield* Effect.tryPromise({
        try: () => fs.mkdir(options.stagingDir, { recursive: true, mode: 0o700 }),
        catch: (cause) => new PackageCacheUnavailable({ detail: (cause as NodeJS.ErrnoException)?.code ?? "staging" })
      })
      const unpacked = yield* registry.unpack({ name: listing.packageId, version: listing.version, into: staging })
      if (unpacked.integrity !== listing.digest) {
        return yield* new DigestMismatch({ expected: listing.digest, actual: unpacked.integrity })
      }
      const scan = yield* folders.scan(staging)
      if (boundTo !== undefined && scan.digest !== boundTo) return yield* new DigestMismatch({ expected: boundTo, actual: scan.digest })
      return yield* folders.copyToCache(staging, scan.digest)
    }).pipe(Effect.ensuring(Effect.promise(() => fs.rm(staging, { recursive: true, force: true }).catch(() => {}))))
  }

  /** Checks 1-4 and 7: the listing, the digest, the cache copy, its manifest and the reach it declares. */
  const prepare = (request: InstallRequest, boundTo?: string) =>
    Effect.gen(function*() {
      const listing = yield* Effect.flatMap(
        directory.find(request.packageId),
        Option.match({
          onNone: () => Effect.fail(new PackageNotListed({ packageId: request.packageId })),
          onSome: Effect.succeed
        })
      )
      if (request.version !== undefined && request.version !== listing.version) {
        return yield* new InstallRequestInvalid({ field: "version", problem: `the directory lists version ${listing.version}` })
      }
      const copy = listing.source === "marketplace" || listing.path === null
        ? yield* fromRegistry(listing, boundTo)
        : request.localDigest === undefined
        ? yield* new InstallRequestInvalid({
          field: "localDigest",
          problem: "a package listed from a local folder is installed with the contentDigest of its listing"
        })
        : yield* folders.copyToCache(listing.path, request.localDigest)
      const pkg = yield* readCopy(copy.path)
      const undeclared = undeclaredReach(listing.permissions, pkg.clark.permissions)
      if (undeclared.length > 0) return yield* new DeclaredReachMismatch({ undeclared })
      return { listing, copy, pkg, contentDigest: copy.scan.digest }
    })

  const readCopy = (folder: string) =>
    Effect.gen(function*() {
      const text = yield* Effect.tryPromise({
        try: () => fs.readFile(path.join(folder, "package.json"), "utf8"),
        catch: () => new ManifestInvalid({ path: "", problem: "the package has no readable package.json" })
      })
      const parsed = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new ManifestInvalid({ path: "", problem: "package.json is not JSON" })
      })
      return yield* Either.match(readPackageJson(parsed), { onLeft: Effect.fail, onRight: Effect.succeed })
    })

  type Prepared = Effect.Effect.Success<ReturnType<typeof prepare>>

  const record = (prepared: Prepared, approvalId: string | null) =>
    Effect.gen(function*() {
      const installedAt = iso(yield* Clock.currentTimeMillis)
      const { listing, pkg } = prepared
      yield* records.recordInstall({
        packageId: listing.packageId,
        source: listing.source,
        version: pkg.version,
        digest: listing.digest,
        contentDigest: prepared.contentDigest,
        cachePath: prepared.copy.path,
        manifest: pkg.clark,
        installedAt
      }, approvalId)
      const installed: Installed = {
        outcome: "installed",
        packageId: listing.packageId,
        version: pkg.version,
        digest: prepared.contentDigest,
        // Capability grants come with package tools (issue 14): nothing is pending or denied yet.
        pendingCapabilities: 0,
        deniedCapabilities: 0
      }
      return installed
    })

  const expire = (approvalId: string) =>
    records.transition(approvalId, ["waiting"], "expired", { outcome: "expired", reason: null })

  const schedule = (approval: ApprovalRecord) =>
    Effect.gen(function*() {
      const remaining = DateTime.toEpochMillis(DateTime.unsafeMake(approval.expiresAt)) - (yield* Clock.currentTimeMillis)
      yield* FiberMap.run(expiries, approval.approvalId, Effect.zipRight(Effect.sleep(Duration.millis(Math.max(0, remaining))), expire(approval.approvalId)))
    })

  const ask = (prepared: Prepared, asker: Asker) =>
    Effect.gen(function*() {
      const { listing, pkg, contentDigest } = prepared
      const existing = yield* records.waitingFor(listing.packageId, pkg.version, contentDigest)
      if (Option.isSome(existing)) return existing.value
      const now = yield* Clock.currentTimeMillis
      const approval: ApprovalRecord = {
        approvalId: `apr_${randomBytes(12).toString("hex")}`,
        packageId: listing.packageId,
        source: listing.source,
        version: pkg.version,
        digest: listing.digest,
        contentDigest,
        operationDigest: operationDigest(listing.packageId, pkg.version, contentDigest),
        asksFor: pkg.clark.permissions,
        riskTier: riskTier(pkg.clark),
        status: "waiting",
        askedBy: asker.surface,
        requestedAt: iso(now),
        expiresAt: iso(now + approvalLifetimeMillis),
        decidedAt: null
      }
      yield* records.insertApproval(approval)
      yield* schedule(approval)
      return approval
    })

  const install = (request: InstallRequest, asker: Asker): Effect.Effect<InstallOutcome, InstallError> =>
    Effect.gen(function*() {
      const prepared = yield* prepare(request)
      const mode = yield* installMode
      switch (decideInstall(riskTier(prepared.pkg.clark), mode, asker.kind)) {
        case "refuse":
          return yield* new InstallPolicyRefused({ mode })
        case "ask": {
          const approval = yield* ask(prepared, asker)
          return { _tag: "ApprovalRequired", approvalId: approval.approvalId, packageId: approval.packageId, version: approval.version } as const
        }
        case "install":
          return { _tag: "Installed", ...(yield* record(prepared, null)) } as const
      }
    })

  /** Why a decision cannot be taken on an approval that is no longer waiting. */
  const closed = (approval: ApprovalRecord) =>
    approval.status === "expired"
      ? new ApprovalExpired({ approvalId: approval.approvalId })
      : new ApprovalAlreadyDecided({ approvalId: approval.approvalId, status: approval.status })

  const current = (approvalId: string) =>
    Effect.flatMap(
      records.approval(approvalId),
      Option.match({ onNone: () => Effect.fail(new ApprovalNotFound({ approvalId })), onSome: Effect.succeed })
    )

  /** Another decider won the conditional write: answer with what it decided. */
  const lost = (approvalId: string) => Effect.flatMap(current(approvalId), (approval) => Effect.fail(closed(approval)))

  /** Does the directory still publish exactly what the approval asked about? */
  const stillListed = (approval: ApprovalRecord, listing: Option.Option<Listing>) =>
    stillPublished(approval, Option.getOrUndefined(listing))

  const decide = (approvalId: string, decision: Decision, digest: string) =>
    Effect.gen(function*() {
      const approval = yield* current(approvalId)
      if (approval.status !== "waiting") return yield* closed(approval)
      if ((yield* Clock.currentTimeMillis) >= DateTime.toEpochMillis(DateTime.unsafeMake(approval.expiresAt))) {
        yield* expire(approvalId)
        return yield* lost(approvalId)
      }
      if (digest !== approval.operationDigest) return yield* new ApprovalForged({ approvalId })

      if (decision === "denied") {
        if (!(yield* records.transition(approvalId, ["waiting"], "denied", { outcome: "denied", reason: null }))) {
          return yield* lost(approvalId)
        }
        yield* FiberMap.remove(expiries, approvalId)
        return { approvalId, decision }
      }

      const listing = yield* directory.find(approval.packageId).pipe(
        // A listed folder that cannot be read any more ends the question, as changed files do.
        Effect.tapError((error) =>
          Effect.zipRight(
            records.transition(approvalId, ["waiting"], "refused", { outcome: "refused", reason: error._tag }),
            FiberMap.remove(expiries, approvalId)
          ))
      )
      if (!stillListed(approval, listing)) {
        const mismatch = new DigestMismatch({
          expected: approval.source === "local" ? approval.contentDigest : approval.digest,
          actual: Option.match(listing, {
            onNone: () => "not listed",
            onSome: (l) => l.source === "local" ? l.contentDigest ?? l.digest : l.digest
          })
        })
        // Local files that changed end the question; a marketplace listing that moved keeps it open.
        if (approval.source === "local" && Option.isSome(listing)) {
          yield* records.transition(approvalId, ["waiting"], "refused", { outcome: "refused", reason: mismatch._tag })
          yield* FiberMap.remove(expiries, approvalId)
        }
        return yield* mismatch
      }
      const mode = yield* installMode
      if (mode === "off") return yield* new InstallPolicyRefused({ mode })

      if (!(yield* records.transition(approvalId, ["waiting"], "granted", null))) return yield* lost(approvalId)
      yield* FiberMap.remove(expiries, approvalId)
      const installed = yield* prepare({
        packageId: approval.packageId,
        version: approval.version,
        localDigest: approval.contentDigest
      }, approval.contentDigest).pipe(
        Effect.flatMap((prepared) => record(prepared, approvalId)),
        Effect.tapError((error) =>
          records.transition(
            approvalId,
            ["granted"],
            error._tag === "PackageCacheUnavailable" ? "failed" : "refused",
            { outcome: error._tag === "PackageCacheUnavailable" ? "failed" : "refused", reason: error._tag }
          ))
      )
      return { approvalId, decision, installed }
    }) as Effect.Effect<{ approvalId: string; decision: Decision; installed?: Installed }, ApprovalError>

  const approval = (approvalId: string) => Effect.map(records.approval(approvalId), Option.map(toWire))

  // Approvals that were waiting when the node stopped expire on their own clock (at once if already due).
  yield* Effect.forEach(yield* records.waiting, schedule, { discard: true })

  return Installer.of({ install, decide, approval })
})

export const layer = (options: Options) => Layer.scoped(Installer, make(options))
