/**
 * What the node keeps about packages: local folders the person listed, installed packages, install
 * approvals and the `package.install-approval` event stream. Each transition of an approval is one
 * conditional write, so of simultaneous deciders exactly one moves it.
 */
import { Context, type Effect, type Option } from "effect"
import type { Manifest } from "../../schema/node/Manifest.js"
import type { ApprovalEvent, ApprovalOutcome, InstallApproval } from "../../schema/node/Package.js"

export interface LocalSource {
  readonly packageId: string
  readonly path: string
  readonly addedAt: string
}

export interface InstalledPackage {
  readonly packageId: string
  readonly source: "local" | "marketplace"
  readonly version: string
  /** The listing's digest the install was bound to (content digest, or registry integrity). */
  readonly digest: string
  readonly contentDigest: string
  readonly cachePath: string
  readonly manifest: Manifest
  readonly installedAt: string
}

/** An approval as stored: what the wire shows, plus the digests the install is bound to. */
export interface ApprovalRecord extends Omit<InstallApproval, "kind"> {
  readonly digest: string
  readonly contentDigest: string
}

export type ApprovalEventInput = Omit<ApprovalEvent, "seq" | "at">

export class PackageRecords extends Context.Tag("clark/node/PackageRecords")<PackageRecords, {
  /** Lists a folder under its package id, replacing an earlier folder of the same id. */
  readonly addLocal: (source: LocalSource) => Effect.Effect<void>
  readonly localSources: Effect.Effect<ReadonlyArray<LocalSource>>
  readonly installed: Effect.Effect<ReadonlyArray<InstalledPackage>>
  readonly installedOne: (packageId: string) => Effect.Effect<Option.Option<InstalledPackage>>
  /** Grows with every install this process recorded: readers of `installed` know when to read again. */
  readonly revision: Effect.Effect<number>
  /** Records the install (replacing another version) and, for an approved one, its event, in one transaction. */
  readonly recordInstall: (pkg: InstalledPackage, approvalId: string | null) => Effect.Effect<void>
  /** Records the approval and its `asked` event, in one transaction. */
  readonly insertApproval: (approval: ApprovalRecord) => Effect.Effect<void>
  readonly approval: (approvalId: string) => Effect.Effect<Option.Option<ApprovalRecord>>
  /** A waiting approval for exactly this package, version and content digest (asking again reuses it). */
  readonly waitingFor: (packageId: string, version: string, contentDigest: string) => Effect.Effect<Option.Option<ApprovalRecord>>
  readonly waiting: Effect.Effect<ReadonlyArray<ApprovalRecord>>
  /**
   * Moves an approval from one of `from` to `to` and appends its event (if any), in one transaction; false
   * when it was in none of them (someone else decided, or it expired). An expiry also writes its notice.
   */
  readonly transition: (
    approvalId: string,
    from: ReadonlyArray<InstallApproval["status"]>,
    to: InstallApproval["status"],
    event: { readonly outcome: ApprovalOutcome; readonly reason: string | null } | null
  ) => Effect.Effect<boolean>
  readonly appendEvent: (event: ApprovalEventInput) => Effect.Effect<void>
  readonly events: (after: number, limit: number) => Effect.Effect<ReadonlyArray<ApprovalEvent>>
}>() {}
