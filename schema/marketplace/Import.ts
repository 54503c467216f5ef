/**
 * The import file of `clark marketplace admin import`: the API's own field names
 * plus what only an administrator sets (curation status, published flags, page
 * revisions). Unknown fields are refused.
 */
import { Schema } from "effect"
import { Slug } from "../common/Text.js"
import { CollectionDescription, CollectionPosition, CollectionTitle } from "./Catalog.js"
import { CurationStatus, Facet, PackageName, Permission, Preview, SecurityCheck, Version } from "./Package.js"
import { PageDocument, PageKind, PageSlug } from "./Page.js"

/** Any ISO-8601 instant, stored in its canonical UTC form so text order is time order. */
const isoInstantPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/

/** A real calendar instant: `Date.parse` alone rolls 2024-02-30 over to March. */
const isIsoInstant = (value: string): boolean => {
  const match = isoInstantPattern.exec(value)
  if (match === null) return false
  const [year, month, day, hour, minute, second = "0", offsetHours = "0", offsetMinutes = "0"] = match.slice(1)
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate()
  return Number(month) >= 1 && Number(month) <= 12 && Number(day) >= 1 && Number(day) <= daysInMonth &&
    Number(hour) <= 23 && Number(minute) <= 59 && Number(second) <= 59 &&
    Number(offsetHours) <= 23 && Number(offsetMinutes) <= 59
}

export const IsoInstant = Schema.transform(
  Schema.String.pipe(
    Schema.filter(isIsoInstant, { message: () => "must be an ISO-8601 date-time with a time zone" })
  ),
  Schema.String,
  { strict: true, decode: (s) => new Date(s).toISOString(), encode: (s) => s }
)

const OptionalText = Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })

export const ImportCategory = Schema.Struct({
  slug: Slug,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  position: Schema.optionalWith(Schema.Int, { default: () => 0 })
})

/** An account's email; matched case-insensitively against existing accounts. */
const MemberEmail = Schema.String.pipe(
  Schema.maxLength(320),
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "must be an email address" })
)
const MemberEmails = Schema.optionalWith(Schema.Array(MemberEmail), { default: () => [] })

export const ImportPublisher = Schema.Struct({
  slug: Slug,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)),
  verified: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Accounts made owners, or members, of the publisher; memberships not listed are kept. */
  owners: MemberEmails,
  members: MemberEmails
})
export type ImportPublisher = typeof ImportPublisher.Type

export const ImportVersion = Schema.Struct({
  version: Version,
  publishedAt: IsoInstant,
  indexedAt: IsoInstant,
  registryIntegrity: Schema.String.pipe(Schema.minLength(1)),
  tarballSha512Verified: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  hasProvenance: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  readmeHtml: OptionalText,
  platforms: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  facets: Schema.optionalWith(Schema.Array(Facet), { default: () => [] }),
  permissions: Schema.optionalWith(Schema.Array(Permission), { default: () => [] }),
  previews: Schema.optionalWith(Schema.Array(Preview), { default: () => [] }),
  securityChecks: Schema.optionalWith(Schema.Array(SecurityCheck), { default: () => [] })
})
export type ImportVersion = typeof ImportVersion.Type

export const ImportPackage = Schema.Struct({
  name: PackageName,
  displayName: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(214)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  /** Publisher slug. */
  publisher: OptionalText,
  categorySlug: OptionalText,
  curationStatus: Schema.optionalWith(CurationStatus, { default: () => "unreviewed" as const }),
  keywords: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  homepage: OptionalText,
  repositoryUrl: OptionalText,
  license: OptionalText,
  /** Defaults to the most recently published version. */
  latestVersion: Schema.optional(Version),
  updatedAt: Schema.optional(IsoInstant),
  versions: Schema.optionalWith(Schema.Array(ImportVersion), { default: () => [] })
})
export type ImportPackage = typeof ImportPackage.Type

export const ImportCollection = Schema.Struct({
  slug: Slug,
  title: CollectionTitle,
  description: Schema.optionalWith(CollectionDescription, { default: () => "" }),
  published: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  position: Schema.optionalWith(CollectionPosition, { default: () => 0 }),
  items: Schema.optionalWith(
    Schema.Array(
      Schema.Struct({
        packageName: PackageName,
        note: Schema.optionalWith(Schema.NullOr(Schema.String.pipe(Schema.maxLength(300))), { default: () => null })
      })
    ),
    { default: () => [] }
  )
})
export type ImportCollection = typeof ImportCollection.Type

export const ImportPageRevision = Schema.Struct({
  document: PageDocument,
  createdAt: Schema.optional(IsoInstant),
  /** A revision without `publishedAt` is a draft. The newest published revision is the one served. */
  publishedAt: Schema.optionalWith(Schema.NullOr(IsoInstant), { default: () => null })
})

export const ImportPage = Schema.Struct({
  slug: PageSlug,
  kind: PageKind,
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  revisions: Schema.Array(ImportPageRevision).pipe(Schema.minItems(1))
})
export type ImportPage = typeof ImportPage.Type

export const ImportDocument = Schema.Struct({
  categories: Schema.optionalWith(Schema.Array(ImportCategory), { default: () => [] }),
  publishers: Schema.optionalWith(Schema.Array(ImportPublisher), { default: () => [] }),
  packages: Schema.optionalWith(Schema.Array(ImportPackage), { default: () => [] }),
  collections: Schema.optionalWith(Schema.Array(ImportCollection), { default: () => [] }),
  pages: Schema.optionalWith(Schema.Array(ImportPage), { default: () => [] })
}).annotations({ identifier: "ImportDocument" })
export type ImportDocument = typeof ImportDocument.Type
export type ImportDocumentInput = typeof ImportDocument.Encoded
