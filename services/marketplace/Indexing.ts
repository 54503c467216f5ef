/**
 * The indexer's rules, pure: what a verified tarball's `package.json` and readme become in the catalogue,
 * the security checks shown with each version, which failures are worth another attempt, and when.
 */
import { Either, Schema } from "effect"
import { distance } from "fastest-levenshtein"
import type { ImportVersion } from "../../schema/marketplace/Import.js"
import { type CurationStatus, Preview, SecurityCheck } from "../../schema/marketplace/Package.js"

type SecurityCheck = typeof SecurityCheck.Type
type Preview = typeof Preview.Type
import type { PackageJson } from "../../schema/node/Manifest.js"
import { readPackageJson } from "../node/Manifest.js"
import type { ManifestError } from "../node/PackageErrors.js"
import type { RegistryPackageError } from "../registry/RegistryErrors.js"
import { renderReadme } from "./Readme.js"

/** npm runs these on install: code a package runs before anyone opened it. */
export const installScripts = ["preinstall", "install", "postinstall", "prepare"] as const

/** Permission kinds that reach outside the sandbox (DESIGN.md, "A package"). */
export const outsideReach = new Set(["network", "filesystem", "microphone", "camera", "lifecycle"])

const platformPattern = /^[a-z0-9-]{1,40}$/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const stringOrNull = (value: unknown, max = 2048): string | null =>
  typeof value === "string" && value.length > 0 ? value.slice(0, max) : null

/** `repository` as npm allows it: a URL string or `{type, url}`; a `git+` prefix and `.git` suffix dropped. */
export const repositoryUrlOf = (value: unknown): string | null => {
  const raw = typeof value === "string" ? value : isRecord(value) ? stringOrNull(value.url) : null
  if (raw === null) return null
  const url = raw.replace(/^git\+/, "").replace(/\.git$/, "")
  return /^https?:\/\//.test(url) ? url : null
}

const httpUrl = (value: unknown): string | null => {
  const url = stringOrNull(value)
  return url !== null && /^https:\/\//.test(url) && URL.canParse(url) ? url : null
}

/** `clark.platforms`: lower-case names; anything else is dropped. */
export const platformsOf = (clark: Record<string, unknown>): ReadonlyArray<string> =>
  Array.isArray(clark.platforms)
    ? [...new Set(clark.platforms.filter((p): p is string => typeof p === "string" && platformPattern.test(p)))]
    : []

const decodePreview = Schema.decodeUnknownEither(Preview)

/** `clark.previews` with https URLs only (the marketplace never serves a package's own files). */
export const previewsOf = (clark: Record<string, unknown>): ReadonlyArray<Preview> =>
  Array.isArray(clark.previews)
    ? clark.previews.slice(0, 16).flatMap((raw) => {
      const preview = decodePreview(raw, { onExcessProperty: "ignore" })
      return Either.isRight(preview) && httpUrl(preview.right.url) !== null ? [preview.right] : []
    })
    : []

/** Names of existing packages a newcomer could be mistaken for: one edit away, or two for long names. */
export const similarNames = (name: string, existing: ReadonlyArray<string>): ReadonlyArray<string> => {
  const bare = (n: string) => n.replace(/^@[^/]+\//, "")
  const mine = bare(name)
  const within = mine.length >= 8 ? 2 : 1
  return existing.filter((other) => {
    if (other === name) return false
    const theirs = bare(other)
    return Math.abs(theirs.length - mine.length) <= within && distance(theirs, mine) <= within
  }).slice(0, 10)
}

export interface Verified {
  readonly version: string
  readonly integrity: string
  readonly signatures: "verified" | "absent"
  readonly provenance: "verified" | "absent"
}

export interface Analysis {
  readonly manifest: PackageJson
  readonly displayName: string
  readonly description: string
  readonly keywords: ReadonlyArray<string>
  readonly homepage: string | null
  readonly repositoryUrl: string | null
  readonly license: string | null
  /** A version entry without its instants (the caller's clock and the registry's publish time). */
  readonly version: Omit<ImportVersion, "publishedAt" | "indexedAt">
  /** The curation status of a package the catalogue does not have yet. */
  readonly initialStatus: CurationStatus
}

/**
 * The catalogue's entry for a verified version. `files` are the tarball's paths below `package/`; a
 * `package.json` without a valid `clark` manifest is not a Clark package and is refused.
 */
export const analyse = (input: {
  readonly packageJson: unknown
  readonly readme: string | undefined
  readonly files: ReadonlySet<string>
  readonly verified: Verified
  readonly similar: ReadonlyArray<string>
}): Either.Either<Analysis, ManifestError> =>
  Either.map(readPackageJson(input.packageJson), (manifest) => {
    const raw = input.packageJson as Record<string, unknown>
    const clark = raw.clark as Record<string, unknown>
    const scripts = isRecord(raw.scripts) ? raw.scripts : {}
    const lifecycle = installScripts.filter((name) => typeof scripts[name] === "string")
    const reach = manifest.clark.permissions.filter((p) => outsideReach.has(p.kind))
    const missing = manifest.clark.facets.map((facet) => facet.entry).filter((entry) => !input.files.has(entry))
    const checks: Array<SecurityCheck> = [
      { check: "integrity", result: "pass", details: { algorithm: "sha512", integrity: input.verified.integrity } },
      input.verified.signatures === "verified"
        ? { check: "registry-signature", result: "pass" }
        : { check: "registry-signature", result: "warn", details: { reason: "the registry publishes no signature for this version" } },
      input.verified.provenance === "verified"
        ? { check: "provenance", result: "pass" }
        : { check: "provenance", result: "warn", details: { reason: "no provenance attestation is published" } },
      lifecycle.length === 0
        ? { check: "install-scripts", result: "pass" }
        : { check: "install-scripts", result: "warn", details: { scripts: lifecycle } },
      // Install scripts are outside reach the package must declare (a lifecycle permission).
      lifecycle.length > 0 && !reach.some((p) => p.kind === "lifecycle")
        ? { check: "declared-reach", result: "fail", details: { reason: "install scripts without a lifecycle permission", scripts: lifecycle } }
        : reach.length > 0
        ? { check: "declared-reach", result: "warn", details: { reach: reach.map((p) => ({ kind: p.kind, value: p.value })) } }
        : { check: "declared-reach", result: "pass" },
      missing.length === 0
        ? { check: "facet-entries", result: "pass" }
        : { check: "facet-entries", result: "fail", details: { missing } },
      input.similar.length === 0
        ? { check: "name-similarity", result: "pass" }
        : { check: "name-similarity", result: "warn", details: { similarTo: input.similar } }
    ]
    const keywords = Array.isArray(raw.keywords)
      ? raw.keywords.filter((k): k is string => typeof k === "string" && k.length > 0 && k.length <= 64).slice(0, 32)
      : []
    return {
      manifest,
      displayName: stringOrNull(clark.displayName, 214) ?? manifest.name,
      description: stringOrNull(raw.description, 1000) ?? "",
      keywords,
      homepage: httpUrl(raw.homepage),
      repositoryUrl: repositoryUrlOf(raw.repository),
      license: stringOrNull(raw.license, 200),
      version: {
        version: input.verified.version,
        registryIntegrity: input.verified.integrity,
        tarballSha512Verified: true,
        hasProvenance: input.verified.provenance === "verified",
        readmeHtml: input.readme === undefined ? null : renderReadme(input.readme),
        platforms: platformsOf(clark),
        facets: manifest.clark.facets,
        permissions: manifest.clark.permissions,
        previews: previewsOf(clark),
        securityChecks: checks
      },
      initialStatus: checks.some((check) => check.result === "fail") ? "unreviewed" : "listed"
    }
  })

export type IndexFailure = RegistryPackageError | ManifestError

/** Worth another attempt: the registry was unreachable or answered oddly; the rest would fail again. */
export const isTransient = (error: IndexFailure): boolean => error._tag === "RegistryUnavailable"

/** What the submitter reads: the package's terms only, never the registry's URL. */
export const describeFailure = (error: IndexFailure): string => {
  switch (error._tag) {
    case "RegistryNotConfigured":
      return "no registry is configured for the indexer"
    case "RegistryUnavailable":
      return `the registry did not answer the ${error.stage}${error.status === undefined ? "" : ` (status ${error.status})`}: ${error.problem}`
    case "PackageNotInRegistry":
      return `the registry has no ${error.name}${error.version === undefined ? "" : `@${error.version}`}`
    case "IntegrityMismatch":
      return error.expected === "none"
        ? "the registry gives no sha512 integrity for this version"
        : "the tarball's sha512 does not match the registry's integrity"
    case "TarballRefused":
      return `the tarball was refused (${error.reason}${error.path === undefined ? "" : ` at ${error.path}`}${error.limit === undefined ? "" : `, limit ${error.limit}`})`
    case "SignatureInvalid":
      return `a registry signature does not verify: ${error.problem}`
    case "ProvenanceInvalid":
      return `the provenance attestation does not verify: ${error.problem}`
    case "ManifestInvalid":
      return `the clark manifest is invalid at ${error.path === "" ? "package.json" : error.path}: ${error.problem}`
    case "ManifestVersionUnsupported":
      return `the clark manifest version ${error.found} is not supported (supported: ${error.supported})`
  }
}

export interface RetryPolicy {
  readonly maxAttempts: number
  readonly baseMillis: number
  readonly capMillis: number
}

export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 5, baseMillis: 30_000, capMillis: 30 * 60_000 }

/** The wait before attempt `attempts + 1`: doubling from the base, capped; undefined when none is left. */
export const backoff = (policy: RetryPolicy, attempts: number): number | undefined =>
  attempts >= policy.maxAttempts ? undefined : Math.min(policy.capMillis, policy.baseMillis * 2 ** (attempts - 1))
