/** Packages as the marketplace lists and describes them. */
import { Schema } from "effect"
import { DateTimeString, IntFromString, PathSegment, Slug } from "../common/Text.js"

export const CurationStatus = Schema.Literal("unreviewed", "listed", "featured", "hidden", "rejected")
export type CurationStatus = typeof CurationStatus.Type

/** Statuses that make a package publicly visible. */
export const publicStatuses: ReadonlyArray<CurationStatus> = ["listed", "featured"]

export const Isolation = Schema.Literal("declarative", "service", "isolated-ui", "trusted-native")
export type Isolation = typeof Isolation.Type

export const packageNamePattern = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/

/** A registry package name as accepted in requests (scoped names arrive URL-encoded in paths). */
export const PackageName = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(214),
  Schema.pattern(packageNamePattern, {
    message: () =>
      "must be a registry package name: optional @scope/ prefix, lowercase letters, digits, '.', '_', '~', '-', starting with a letter or digit"
  })
).annotations({ identifier: "PackageName" })

export const versionPattern = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/
export const Version = Schema.String.pipe(
  Schema.pattern(versionPattern, {
    message: () => "must be three dot-separated integers with an optional hyphenated prerelease suffix"
  })
).annotations({ identifier: "Version" })

export const Publisher = Schema.Struct({ slug: Schema.String, name: Schema.String, verified: Schema.Boolean })

export const PackageSummary = Schema.Struct({
  name: Schema.String,
  displayName: Schema.String,
  description: Schema.String,
  latestVersion: Schema.NullOr(Schema.String),
  publisher: Schema.NullOr(Publisher),
  categorySlug: Schema.NullOr(Schema.String),
  curationStatus: CurationStatus,
  keywords: Schema.Array(Schema.String),
  indexedAt: Schema.NullOr(DateTimeString),
  updatedAt: DateTimeString
}).annotations({ identifier: "PackageSummary" })
export type PackageSummary = typeof PackageSummary.Type

export const Facet = Schema.Struct({
  kind: Schema.String,
  isolation: Schema.String,
  renderer: Schema.NullOr(Schema.String),
  entry: Schema.String,
  widgetId: Schema.NullOr(Schema.String)
})

export const PermissionKind = Schema.Literal("capability", "network", "filesystem", "microphone", "camera", "lifecycle")
export const Permission = Schema.Struct({
  kind: PermissionKind,
  value: Schema.String,
  access: Schema.NullOr(Schema.String)
})

export const Preview = Schema.Struct({
  kind: Schema.Literal("image", "video", "social_card"),
  url: Schema.String,
  alt: Schema.String,
  contentType: Schema.String,
  width: Schema.NullOr(Schema.Int),
  height: Schema.NullOr(Schema.Int)
})

export const SecurityCheck = Schema.Struct({
  check: Schema.String,
  result: Schema.Literal("pass", "warn", "fail"),
  details: Schema.optional(Schema.Unknown)
})

export const VersionItem = Schema.Struct({
  version: Schema.String,
  publishedAt: DateTimeString,
  indexedAt: DateTimeString,
  registryIntegrity: Schema.String,
  tarballSha512Verified: Schema.Boolean,
  hasProvenance: Schema.Boolean
}).annotations({ identifier: "VersionItem" })
export type VersionItem = typeof VersionItem.Type

export const LatestVersion = Schema.Struct({
  ...VersionItem.fields,
  readmeHtml: Schema.NullOr(Schema.String),
  platforms: Schema.Array(Schema.String),
  facets: Schema.Array(Facet),
  permissions: Schema.Array(Permission),
  previews: Schema.Array(Preview),
  securityChecks: Schema.Array(SecurityCheck)
}).annotations({ identifier: "LatestVersion" })
export type LatestVersion = typeof LatestVersion.Type

export const PackageDetail = Schema.Struct({
  ...PackageSummary.fields,
  homepage: Schema.NullOr(Schema.String),
  repositoryUrl: Schema.NullOr(Schema.String),
  license: Schema.NullOr(Schema.String),
  latest: Schema.NullOr(LatestVersion),
  versions: Schema.Array(Schema.Struct({ version: Schema.String, publishedAt: DateTimeString }))
}).annotations({ identifier: "PackageDetail" })
export type PackageDetail = typeof PackageDetail.Type

export const PackagePage = Schema.Struct({
  items: Schema.Array(PackageSummary),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PackagePage" })

export const SearchPage = Schema.Struct({
  query: Schema.String,
  items: Schema.Array(PackageSummary),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "SearchPage" })

export const VersionList = Schema.Struct({ items: Schema.Array(VersionItem) })

export const InstallCoordinate = Schema.Struct({
  package: Schema.String,
  version: Schema.String,
  source: Schema.Literal("registry"),
  integrity: Schema.String,
  openInApp: Schema.String,
  cliCommand: Schema.String
}).annotations({ identifier: "InstallCoordinate" })
export type InstallCoordinate = typeof InstallCoordinate.Type

export const Sort = Schema.Literal("latest", "name", "relevance")
export type Sort = typeof Sort.Type

/** Query parameters shared by GET /packages and GET /search. */
export const SearchParams = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  category: Schema.optional(Slug),
  kind: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1),
      Schema.maxLength(32),
      Schema.pattern(/^[a-z-]+$/, { message: () => "must be lowercase letters and hyphens" })
    )
  ),
  isolation: Schema.optional(Isolation),
  platform: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1),
      Schema.maxLength(40),
      Schema.pattern(/^[a-z0-9-]+$/, { message: () => "must be lowercase letters, digits and hyphens" })
    )
  ),
  publisher: Schema.optional(Slug),
  curation: Schema.optional(Schema.Literal("listed", "featured")),
  limit: Schema.optional(IntFromString(1, 100)),
  cursor: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})
export type SearchParams = typeof SearchParams.Type

export const ListParams = Schema.Struct({ ...SearchParams.fields, sort: Schema.optional(Sort) })
export type ListParams = typeof ListParams.Type

export const PackagePath = Schema.Struct({ name: PathSegment(PackageName) })
export const InstallParams = Schema.Struct({ version: Schema.optional(Version) })
