/** The signed-in account and the listings it owns. */
import { Schema } from "effect"
import { DateTimeString } from "../common/Text.js"
import { CurationStatus } from "./Package.js"

export const Scope = Schema.Literal(
  "packages:read",
  "packages:submit",
  "packages:curate",
  "publishers:read",
  "publishers:write",
  "pages:read",
  "pages:write",
  "pages:publish",
  "media:write",
  "account:read",
  "account:write",
  "devices:link",
  "admin"
)
export type Scope = typeof Scope.Type

export const Role = Schema.Literal("admin", "user")
export type Role = typeof Role.Type

export const AccountProfile = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  email: Schema.String,
  emailVerified: Schema.Boolean,
  image: Schema.NullOr(Schema.String),
  role: Role,
  scopes: Schema.Array(Scope),
  createdAt: DateTimeString
}).annotations({ identifier: "AccountProfile" })
export type AccountProfile = typeof AccountProfile.Type

export const DeleteAccountRequest = Schema.Struct({ confirm: Schema.Literal("DELETE") })

export const DeletedAccount = Schema.Struct({
  deleted: Schema.Literal(true),
  removed: Schema.Struct({
    apiTokens: Schema.Int,
    deviceLinks: Schema.Int,
    oauthGrants: Schema.Int,
    publishers: Schema.Int,
    media: Schema.Int
  })
}).annotations({ identifier: "DeletedAccount" })
export type DeletedAccount = typeof DeletedAccount.Type

export const OwnedListing = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  displayName: Schema.String,
  latestVersion: Schema.NullOr(Schema.String),
  curationStatus: CurationStatus,
  verifiedPublisher: Schema.Boolean,
  publisher: Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String })
}).annotations({ identifier: "OwnedListing" })
export type OwnedListing = typeof OwnedListing.Type

export const OwnedListings = Schema.Struct({ items: Schema.Array(OwnedListing) })
