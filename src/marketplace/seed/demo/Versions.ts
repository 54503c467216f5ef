/** The demo packages' versions: numbers, release times, facets, permissions, previews, checks and readmes. */
import {
  fakeIntegrity,
  type ImportPackageInput,
  type ImportVersionInput,
  type Rng
} from "../Synthetic.js"
import { type Kind, kindSpecs } from "./Catalogue.js"
import type { CategorySpec, Topic } from "./Categories.js"

type CurationStatus = NonNullable<ImportPackageInput["curationStatus"]>
type FacetInput = NonNullable<ImportVersionInput["facets"]>[number]
type PermissionInput = NonNullable<ImportVersionInput["permissions"]>[number]
type PreviewInput = NonNullable<ImportVersionInput["previews"]>[number]
type SecurityCheckInput = NonNullable<ImportVersionInput["securityChecks"]>[number]

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

export const dayMs = 86_400_000
export const minuteMs = 60_000

export const isoDaysBefore = (now: Date, days: number): string => new Date(now.getTime() - days * dayMs).toISOString()

/** FNV-1a, so each topic gets its own random stream: adding a topic leaves the others unchanged. */
export const hashString = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

export const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * Curation is assigned by position rather than by chance so every status is present
 * whatever the PRNG does: mostly listed, one in ten featured, a few of the others.
 */
export const curationFor = (index: number): CurationStatus => {
  if (index % 37 === 19) return "rejected"
  if (index % 31 === 11) return "hidden"
  if (index % 25 === 7) return "unreviewed"
  if (index % 10 === 3) return "featured"
  return "listed"
}

// ---------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------

/** 1-6 semver strings in release order; a major bump is sometimes preceded by a `-beta.1`. */
export const versionNumbers = (rng: Rng, count: number): Array<string> => {
  let [major, minor, patch] = rng.chance(0.4) ? [0, 1, 0] : [1, 0, 0]
  const out = [`${major}.${minor}.${patch}`]
  while (out.length < count) {
    const roll = rng.next()
    if (roll < 0.55) {
      patch += 1
    } else if (roll < 0.85) {
      minor += 1
      patch = 0
    } else {
      major += 1
      minor = 0
      patch = 0
      if (rng.chance(0.5)) {
        out.push(`${major}.0.0-beta.1`)
        if (out.length === count) break
      }
    }
    out.push(`${major}.${minor}.${patch}`)
  }
  return out
}

/**
 * Release instants spread over `[firstDaysAgo, 1 day ago]`: slot `v` starts at
 * `v / count` of the span and is jittered by at most half a slot, so dates strictly
 * increase and leave at least two hours between releases for indexing.
 */
export const releaseTimes = (rng: Rng, now: Date, count: number, firstDaysAgo: number): Array<number> => {
  const first = now.getTime() - firstDaysAgo * dayMs
  const span = now.getTime() - dayMs - first
  return Array.from({ length: count }, (_, v) => first + Math.floor((span * v) / count + rng.next() * (span / (2 * count))))
}

export interface PackageContext {
  readonly rng: Rng
  readonly name: string
  readonly displayName: string
  readonly description: string
  readonly kind: Kind
  readonly category: CategorySpec
  readonly topic: Topic
  readonly status: CurationStatus
  readonly repositoryUrl: string | null
}

export const facetsFor = (ctx: PackageContext, widgetId: string): Array<FacetInput> => {
  const spec = kindSpecs[ctx.kind]
  const main: FacetInput = {
    kind: ctx.kind,
    isolation: ctx.rng.pick(spec.isolations),
    renderer: spec.renderer,
    entry: spec.entry,
    widgetId: ctx.kind === "widget" ? widgetId : null
  }
  // Some widgets ship a companion background service that feeds them data.
  if (ctx.kind === "widget" && ctx.rng.chance(0.2)) {
    return [main, { kind: "service", isolation: "service", renderer: null, entry: "dist/service.js", widgetId: null }]
  }
  return [main]
}

export const permissionsFor = (ctx: PackageContext): Array<PermissionInput> => {
  const { rng, kind, category } = ctx
  if (kind === "theme") return []
  const out: Array<PermissionInput> = []
  if (kind === "skill") out.push({ kind: "capability", value: "assistant.context", access: "read" })
  if (category.hosts.length > 0 && kind !== "skill" && rng.chance(0.8)) {
    out.push({ kind: "network", value: rng.pick(category.hosts), access: null })
  }
  if (kind === "tool" || category.slug === "writing" || category.slug === "research") {
    out.push(
      rng.chance(0.6)
        ? { kind: "filesystem", value: "read:~/Documents", access: "read" }
        : { kind: "filesystem", value: `write:~/Documents/${ctx.topic.label}`, access: "write" }
    )
  }
  if ((category.slug === "media" || category.slug === "communication") && rng.chance(0.4)) {
    out.push({ kind: "microphone", value: "default-input", access: null })
    if (rng.chance(0.5)) out.push({ kind: "camera", value: "default-camera", access: null })
  }
  if (category.slug === "home-automation" && ctx.topic.word === "doorbell") {
    out.push({ kind: "camera", value: "rtsp://doorbell.local", access: "read" })
  }
  if (kind === "service") out.push({ kind: "lifecycle", value: rng.pick(["autostart", "background"]), access: null })
  if (kind === "widget" && rng.chance(0.3)) out.push({ kind: "capability", value: "notifications", access: null })
  if (rng.chance(0.1)) out.push({ kind: "capability", value: "clipboard", access: "write" })
  return out
}

export const previewsFor = (ctx: PackageContext, slug: string): Array<PreviewInput> => {
  const { rng } = ctx
  const base = `https://cdn.clark.example/previews/${slug}`
  const count = ctx.status === "featured" ? rng.int(2, 3) : ctx.kind === "theme" ? rng.int(1, 2) : rng.int(0, 2)
  const out: Array<PreviewInput> = []
  for (let n = 1; n <= count; n++) {
    const roll = rng.next()
    if (n === 1 || roll < 0.5) {
      const webp = rng.chance(0.25)
      out.push({
        kind: "image",
        url: `${base}/screenshot-${n}.${webp ? "webp" : "png"}`,
        alt: `${ctx.displayName} ${n === 1 ? "main view" : "settings"} in a ${rng.pick(["light", "dark"])} theme`,
        contentType: webp ? "image/webp" : "image/png",
        // Some uploads were never measured: the importer must accept unknown sizes.
        width: webp ? null : 1280,
        height: webp ? null : 800
      })
    } else if (roll < 0.8) {
      out.push({
        kind: "video",
        url: `${base}/demo.mp4`,
        alt: `A thirty-second walkthrough of ${ctx.displayName}`,
        contentType: "video/mp4",
        width: 1920,
        height: 1080
      })
    } else {
      out.push({
        kind: "social_card",
        url: `${base}/card.png`,
        alt: `${ctx.displayName}: ${ctx.description}`,
        contentType: "image/png",
        width: 1200,
        height: 630
      })
    }
  }
  return out
}

export const securityChecksFor = (ctx: PackageContext, hasProvenance: boolean): Array<SecurityCheckInput> => {
  const { rng, status } = ctx
  const checks: Array<SecurityCheckInput> = [{ check: "integrity", result: "pass", details: { algorithm: "sha512" } }]
  // Unreviewed packages have only been through the automatic integrity check.
  if (status === "unreviewed") return checks
  checks.push(
    hasProvenance
      ? { check: "provenance", result: "pass", details: { builder: "github-actions", sourceRepository: ctx.repositoryUrl } }
      : { check: "provenance", result: "warn", details: { reason: "no provenance attestation published" } }
  )
  checks.push(
    ctx.kind === "tool" && rng.chance(0.3)
      ? { check: "install-scripts", result: "warn", details: { scripts: ["postinstall"], command: "node scripts/fetch-binary.js" } }
      : { check: "install-scripts", result: "pass" }
  )
  if (status === "rejected") {
    checks.push({
      check: "permissions-review",
      result: "fail",
      details: { reviewer: "curation-team", reason: "requests filesystem write access it does not need" }
    })
  } else if (status === "hidden") {
    checks.push({ check: "permissions-review", result: "warn", details: { reviewer: "curation-team", reason: "network host changed in a patch release" } })
  } else {
    checks.push({ check: "permissions-review", result: "pass" })
  }
  return checks
}

export const readmeFor = (ctx: PackageContext, version: string, permissions: ReadonlyArray<PermissionInput>): string => {
  const permissionItems = permissions.length === 0
    ? "<li>No special permissions.</li>"
    : permissions.map((p) => `<li><code>${escapeHtml(p.kind)}</code>: ${escapeHtml(p.value)}</li>`).join("")
  return [
    `<h1>${escapeHtml(ctx.displayName)}</h1>`,
    `<p>${escapeHtml(ctx.description)}</p>`,
    `<h2>Install</h2>`,
    `<pre><code>clark install ${escapeHtml(ctx.name)}@${version}</code></pre>`,
    `<h2>Permissions</h2>`,
    `<ul>${permissionItems}</ul>`
  ].join("\n")
}

export const versionsFor = (ctx: PackageContext, now: Date, slug: string): Array<ImportVersionInput> => {
  const { rng } = ctx
  // Unreviewed packages are new arrivals: one or two recent releases.
  const count = ctx.status === "unreviewed" ? rng.int(1, 2) : rng.int(1, 6)
  const firstDaysAgo = ctx.status === "unreviewed" ? rng.int(2, 20) : rng.int(60, 1000)
  const numbers = versionNumbers(rng, count)
  const times = releaseTimes(rng, now, count, firstDaysAgo)
  const platforms = [...rng.pick(kindSpecs[ctx.kind].platforms)]
  // Widget ids are the bare package name: stable across scopes and readable in layouts.
  const widgetId = ctx.name.replace(/^@[^/]+\//, "")
  const facets = facetsFor(ctx, widgetId)
  const permissions = permissionsFor(ctx)
  const previews = previewsFor(ctx, slug)
  return numbers.map((version, v) => {
    const at = times[v] ?? now.getTime() - dayMs
    const hasProvenance = ctx.repositoryUrl !== null && rng.chance(0.6)
    const latest = v === numbers.length - 1
    return {
      version,
      publishedAt: new Date(at).toISOString(),
      indexedAt: new Date(at + rng.int(2, 90) * minuteMs).toISOString(),
      registryIntegrity: fakeIntegrity(rng),
      tarballSha512Verified: ctx.status !== "unreviewed" || rng.chance(0.5),
      hasProvenance,
      // Older releases often predate the README; the latest one usually has it.
      readmeHtml: rng.chance(latest ? 0.9 : 0.5) ? readmeFor(ctx, version, permissions) : null,
      platforms,
      facets,
      permissions,
      // Screenshots are refreshed only for recent releases.
      previews: latest || v === numbers.length - 2 ? previews : [],
      securityChecks: securityChecksFor(ctx, hasProvenance)
    }
  })
}

