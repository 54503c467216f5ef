/**
 * The execution mode's say on installs, and the reach checks that come before it. Pure: the installer
 * gathers the listing, the manifest of the cache copy and the preference, and these decide.
 */
import type { Manifest } from "../../schema/node/Manifest.js"

/** What an install approval is bound to, and what a listing publishes, as far as the check needs them. */
export interface ApprovalBinding {
  readonly version: string
  readonly source: "local" | "marketplace"
  readonly digest: string
  readonly contentDigest: string
}
export interface ListingBinding {
  readonly version: string
  readonly source: "local" | "marketplace"
  readonly digest: string
  readonly contentDigest?: string | null | undefined
}

/**
 * Does the directory still publish exactly what the approval asked about: the same version and digest (a local
 * folder's content digest, a marketplace listing's registry digest)? A grant installs only then, and the inbox
 * lists the approval only then.
 */
export const stillPublished = (approval: ApprovalBinding, listing: ListingBinding | undefined): boolean =>
  listing !== undefined && listing.version === approval.version &&
  (listing.source === "local" ? listing.contentDigest === approval.contentDigest : listing.digest === approval.digest)

/** `execution.installs` (docs/decisions.md, "Package install policy"). */
export const installModes = ["ask-when-reaching-out", "always-ask", "off"] as const
export type InstallMode = typeof installModes[number]
export const defaultInstallMode: InstallMode = "ask-when-reaching-out"

/** Permission kinds that reach outside the sandbox (DESIGN.md): what a listing must show before install. */
export const outsideKinds: ReadonlySet<string> = new Set(["network", "filesystem", "microphone", "camera", "lifecycle"])

export interface PermissionLike {
  readonly kind: string
  readonly value: string
  readonly access: string | null
}

const key = (permission: PermissionLike) => JSON.stringify([permission.kind, permission.value, permission.access])

/**
 * The manifest's outside-sandbox permissions its listing did not show (rule 7: 409 DECLARED_REACH_MISMATCH).
 * Capabilities are not reach; a listing may show more than the manifest declares.
 */
export const undeclaredReach = (
  listed: ReadonlyArray<PermissionLike>,
  declared: ReadonlyArray<PermissionLike>
): ReadonlyArray<PermissionLike> => {
  const shown = new Set(listed.map(key))
  return declared.filter((permission) => outsideKinds.has(permission.kind) && !shown.has(key(permission)))
}

export type RiskTier = "declarative" | "sandboxed" | "reaches-out" | "native"

/** How far a package can act: native code, then outside reach, then any code in a sandbox, then none. */
export const riskTier = (manifest: Manifest): RiskTier => {
  if (manifest.facets.some((facet) => facet.isolation === "trusted-native")) return "native"
  if (manifest.permissions.some((permission) => outsideKinds.has(permission.kind))) return "reaches-out"
  if (manifest.facets.some((facet) => facet.isolation !== "declarative")) return "sandboxed"
  return "declarative"
}

export type InstallDecision = "install" | "ask" | "refuse"

/**
 * What the mode says of an install asked for by `asker`. A machine surface never installs by itself: its
 * request always waits for the person's decision. Native code always asks, whatever the mode.
 */
export const decideInstall = (tier: RiskTier, mode: InstallMode, asker: "person" | "machine"): InstallDecision => {
  if (mode === "off") return "refuse"
  if (asker === "machine" || mode === "always-ask" || tier === "native" || tier === "reaches-out") return "ask"
  return "install"
}
