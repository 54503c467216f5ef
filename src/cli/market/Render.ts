/** Text renderings of marketplace responses for `clark market` (without `--json`). */
import type { AccountProfile, DeletedAccount, OwnedListing } from "../../../schema/marketplace/Account.js"
import type { Category, Collection, CollectionState, CollectionSummary } from "../../../schema/marketplace/Catalog.js"
import type { CurationResult } from "../../../schema/marketplace/Curation.js"
import type { InstallCoordinate, PackageDetail, PackageSummary, VersionItem } from "../../../schema/marketplace/Package.js"
import type { Health } from "../../../schema/marketplace/System.js"
import { clip, table } from "../Output.js"

const orDash = (value: string | null | undefined) => (value === null || value === undefined || value === "" ? "-" : value)
const list = (values: ReadonlyArray<string>) => (values.length === 0 ? "-" : values.join(", "))
const yesNo = (value: boolean) => (value ? "yes" : "no")

export const packageTable = (items: ReadonlyArray<PackageSummary>, nextCursor: string | null) => {
  if (items.length === 0) return "no packages found"
  const rows = table([
    ["NAME", "VERSION", "STATUS", "DESCRIPTION"],
    ...items.map((item) => [item.name, orDash(item.latestVersion), item.curationStatus, clip(item.description, 60)])
  ])
  return nextCursor === null ? rows : `${rows}\n\nmore: --cursor ${nextCursor}`
}

const publisherLine = (publisher: PackageDetail["publisher"]) =>
  publisher === null ? "-" : `${publisher.name} (${publisher.slug}${publisher.verified ? ", verified" : ""})`

const latestRows = (latest: PackageDetail["latest"]): ReadonlyArray<readonly [string, string]> => {
  if (latest === null) return []
  const checks = [latest.tarballSha512Verified ? "tarball verified" : "", latest.hasProvenance ? "provenance" : ""]
    .filter((check) => check !== "")
  return [
    ["integrity", `${latest.registryIntegrity}${checks.length === 0 ? "" : ` (${checks.join(", ")})`}`],
    ["platforms", list(latest.platforms)],
    ["facets", list(latest.facets.map((facet) => `${facet.kind} (${facet.isolation})`))],
    [
      "permissions",
      list(latest.permissions.map((p) => `${p.kind} ${p.value}${p.access === null ? "" : ` (${p.access})`}`))
    ],
    ["security", list(latest.securityChecks.map((check) => `${check.check}: ${check.result}`))]
  ]
}

export const packageDetail = (detail: PackageDetail) => {
  const title = `${detail.name} ${orDash(detail.latestVersion)} (${detail.displayName})`
  const description = detail.description.trim() === "" ? [] : [clip(detail.description, 200)]
  const versions = detail.versions.length === 0
    ? ["versions: none indexed"]
    : ["versions:", ...table(detail.versions.map((v) => [v.version, v.publishedAt])).split("\n").map((l) => `  ${l}`)]
  return [
    title,
    ...description,
    "",
    table([
      ["status", detail.curationStatus],
      ["publisher", publisherLine(detail.publisher)],
      ["category", orDash(detail.categorySlug)],
      ["license", orDash(detail.license)],
      ["homepage", orDash(detail.homepage)],
      ["repository", orDash(detail.repositoryUrl)],
      ["keywords", list(detail.keywords)],
      ["updated", detail.updatedAt],
      ...latestRows(detail.latest)
    ]),
    "",
    ...versions
  ].join("\n")
}

export const installCoordinate = (coordinate: InstallCoordinate) =>
  [
    `${coordinate.package}@${coordinate.version}`,
    table([
      ["integrity", coordinate.integrity],
      ["command", coordinate.cliCommand],
      ["open in app", coordinate.openInApp]
    ])
  ].join("\n")

export const profile = (account: AccountProfile) =>
  [
    `${account.name} <${account.email}>`,
    table([
      ["id", account.id],
      ["role", account.role],
      ["email verified", yesNo(account.emailVerified)],
      ["scopes", list(account.scopes)],
      ["created", account.createdAt]
    ])
  ].join("\n")

export const curationResult = (result: CurationResult) => `${result.name}: ${result.curationStatus}`

export const collectionState = (state: CollectionState) => {
  const header = `${state.slug}: ${state.title} (${state.published ? "published" : "unpublished"}, position ${state.position})`
  const description = state.description.trim() === "" ? [] : [clip(state.description, 200)]
  const items = state.items.length === 0
    ? ["no items"]
    : [...state.items]
      .sort((a, b) => a.position - b.position)
      .map((item, i) => `${i + 1}. ${item.packageName}${item.note === null ? "" : `  ${clip(item.note, 80)}`}`)
  return [header, ...description, "", ...items].join("\n")
}

export const health = (health: Health) =>
  `${health.status}: database ${health.checks.database}, environment ${health.environment}, checked ${health.checkedAt}`

export const versionTable = (items: ReadonlyArray<VersionItem>) =>
  items.length === 0 ? "no versions indexed" : table([
    ["VERSION", "PUBLISHED", "VERIFIED", "PROVENANCE"],
    ...items.map((item) => [item.version, item.publishedAt, yesNo(item.tarballSha512Verified), yesNo(item.hasProvenance)])
  ])

export const categoryTable = (items: ReadonlyArray<Category>) =>
  items.length === 0 ? "no categories" : table([
    ["SLUG", "NAME", "PACKAGES", "DESCRIPTION"],
    ...items.map((item) => [item.slug, item.name, String(item.packageCount), clip(item.description, 60)])
  ])

export const category = (category: Category) =>
  [
    `${category.slug}: ${category.name} (${category.packageCount} ${category.packageCount === 1 ? "package" : "packages"})`,
    ...(category.description.trim() === "" ? [] : [clip(category.description, 200)])
  ].join("\n")

export const collectionTable = (items: ReadonlyArray<CollectionSummary>) =>
  items.length === 0 ? "no published collections" : table([
    ["SLUG", "TITLE", "DESCRIPTION"],
    ...items.map((item) => [item.slug, clip(item.title, 40), clip(item.description, 60)])
  ])

export const collection = (collection: Collection) =>
  [
    `${collection.slug}: ${collection.title}`,
    ...(collection.description.trim() === "" ? [] : [clip(collection.description, 200)]),
    "",
    collection.packages.length === 0 ? "no packages" : packageTable(collection.packages, null)
  ].join("\n")

export const ownedListings = (items: ReadonlyArray<OwnedListing>) =>
  items.length === 0 ? "no listings owned by your publishers" : table([
    ["NAME", "VERSION", "STATUS", "PUBLISHER"],
    ...items.map((item) => [
      item.name,
      orDash(item.latestVersion),
      item.curationStatus,
      `${item.publisher.slug}${item.verifiedPublisher ? " (verified)" : ""}`
    ])
  ])

export const deletedAccount = ({ removed }: DeletedAccount) =>
  `account deleted; removed ${removed.apiTokens} API tokens, ${removed.deviceLinks} device links, ` +
  `${removed.oauthGrants} OAuth grants, ${removed.publishers} publishers, ${removed.media} media`
