/**
 * Publishers (scopes publishers:read / publishers:write): organisations, their members with roles, the
 * verification of their homepage's domain and the registry packages they claim. The spec names the area
 * only; the shapes are decided in docs/decisions.md ("Publishers").
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateTimeString, PathSegment, Slug } from "../common/Text.js"
import {
  BadRequestWire,
  ConflictWire,
  NotFoundWire,
  RateLimitedWire,
  ValidationFailedWire
} from "./Errors.js"
import { PackageName } from "./Package.js"
import { Authentication } from "./Security.js"

export const PublisherRole = Schema.Literal("owner", "member")
export type PublisherRole = typeof PublisherRole.Type

export const VerificationMethod = Schema.Literal("well-known", "dns")
export type VerificationMethod = typeof VerificationMethod.Type

/**
 * An https URL without credentials, at most 300 characters: the domain a verification proves is its host.
 * Plain http is refused: a proof fetched in the clear proves nothing about who controls the domain.
 */
export const Homepage = Schema.String.pipe(
  Schema.maxLength(300),
  Schema.filter((value) => {
    if (!URL.canParse(value)) return "must be an https URL"
    const url = new URL(value)
    if (url.protocol !== "https:") return "must be an https URL"
    if (url.username !== "" || url.password !== "") return "must not carry a user name or password"
    return true
  })
).annotations({ identifier: "Homepage" })

const PublisherName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120))

export const PublisherMember = Schema.Struct({
  userId: Schema.String,
  name: Schema.String,
  /** Members see each other's addresses: an owner adds a member by it. */
  email: Schema.String,
  role: PublisherRole,
  addedAt: DateTimeString
}).annotations({ identifier: "PublisherMember" })
export type PublisherMember = typeof PublisherMember.Type

export const PublisherVerification = Schema.Struct({
  /** Whether the publisher's homepage domain is verified now (what package summaries show as `verified`). */
  verified: Schema.Boolean,
  method: Schema.NullOr(VerificationMethod),
  verifiedAt: Schema.NullOr(DateTimeString)
}).annotations({ identifier: "PublisherVerification" })

/** A publisher as its members see it. */
export const Publisher = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  homepage: Schema.NullOr(Schema.String),
  verification: PublisherVerification,
  /** The caller's role; null for an admin reading a publisher it is not a member of. */
  role: Schema.NullOr(PublisherRole),
  members: Schema.Array(PublisherMember),
  createdAt: DateTimeString,
  updatedAt: DateTimeString
}).annotations({ identifier: "Publisher" })
export type Publisher = typeof Publisher.Type

export const PublisherList = Schema.Struct({ items: Schema.Array(Publisher) })

export const CreatePublisherRequest = Schema.Struct({
  slug: Slug,
  name: PublisherName,
  homepage: Schema.optional(Homepage)
})
export type CreatePublisherRequest = typeof CreatePublisherRequest.Type

/** Fields left out stay as they are; `homepage: null` removes it (and with it the verification). */
export const UpdatePublisherRequest = Schema.Struct({
  name: Schema.optional(PublisherName),
  homepage: Schema.optional(Schema.NullOr(Homepage))
})
export type UpdatePublisherRequest = typeof UpdatePublisherRequest.Type

export const AddMemberRequest = Schema.Struct({
  email: Schema.String.pipe(Schema.minLength(3), Schema.maxLength(320), Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "must be an e-mail address" })),
  role: PublisherRole
})
export type AddMemberRequest = typeof AddMemberRequest.Type

/** What to publish for a verification: the token, the file's URL and the DNS record's name. */
export const VerificationChallenge = Schema.Struct({
  token: Schema.String,
  /** `https://{homepage host}/.well-known/clark-publisher.txt`, holding the token on a line of its own. */
  wellKnownUrl: Schema.String,
  /** A TXT record at this name whose value is the token. */
  dnsName: Schema.String
}).annotations({ identifier: "VerificationChallenge" })
export type VerificationChallenge = typeof VerificationChallenge.Type

export const VerifyRequest = Schema.Struct({ method: VerificationMethod })

export const ClaimEvidence = Schema.Literal("manifest", "maintainer")
export type ClaimEvidence = typeof ClaimEvidence.Type

export const PackageClaim = Schema.Struct({
  id: Schema.String,
  packageName: Schema.String,
  publisherSlug: Schema.String,
  /** What in the registry showed the package is the publisher's: its `clark.publisher`, or a maintainer. */
  evidence: ClaimEvidence,
  /** The opaque id of the member who claimed it. */
  claimedBy: Schema.String,
  createdAt: DateTimeString
}).annotations({ identifier: "PackageClaim" })
export type PackageClaim = typeof PackageClaim.Type

export const ClaimList = Schema.Struct({ items: Schema.Array(PackageClaim) })

export const ClaimRequest = Schema.Struct({ packageName: PackageName })

export const PublisherPath = Schema.Struct({ slug: Slug })
const UserIdPath = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(128),
  Schema.pattern(/^[A-Za-z0-9_-]+$/, { message: () => "must be letters, digits, '_' and '-'" })
)
export const MemberPath = Schema.Struct({ slug: Slug, userId: UserIdPath })
export const ClaimPath = Schema.Struct({ slug: Slug, name: PathSegment(PackageName) })

// ---------------------------------------------------------------------------
// The group (added to MarketplaceApi in Api.ts)

/**
 * Reads need publishers:read and membership (an admin reads any); writes need publishers:write, and the
 * owner role for everything but claiming and leaving. 403 beyond the scope: a member doing an owner's part.
 */
export class PublishersGroup extends HttpApiGroup.make("publishers")
  .add(HttpApiEndpoint.get("list", "/publishers").addSuccess(PublisherList))
  .add(
    HttpApiEndpoint.post("create", "/publishers")
      .setPayload(CreatePublisherRequest)
      .addSuccess(Publisher, { status: 201 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Create a publisher; the caller becomes its owner")
  )
  .add(
    HttpApiEndpoint.get("get", "/publishers/:slug")
      .setPath(PublisherPath)
      .addSuccess(Publisher)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/publishers/:slug")
      .setPath(PublisherPath)
      .setPayload(UpdatePublisherRequest)
      .addSuccess(Publisher)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "Rename or change the homepage (owners); a new homepage clears the verification")
  )
  .add(
    HttpApiEndpoint.post("addMember", "/publishers/:slug/members")
      .setPath(PublisherPath)
      .setPayload(AddMemberRequest)
      .addSuccess(Publisher)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Add a member by e-mail or change a member's role (owners); the last owner cannot be demoted")
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/publishers/:slug/members/:userId")
      .setPath(MemberPath)
      .addSuccess(Publisher)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Remove a member (owners) or leave (any member); the last owner cannot be removed")
  )
  .add(
    HttpApiEndpoint.post("challenge", "/publishers/:slug/verification/challenge")
      .setPath(PublisherPath)
      .addSuccess(VerificationChallenge)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "The token to publish at the homepage's well-known file or in DNS (owners)")
  )
  .add(
    HttpApiEndpoint.post("verify", "/publishers/:slug/verification")
      .setPath(PublisherPath)
      .setPayload(VerifyRequest)
      .addSuccess(Publisher)
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Check the published token now (owners); 409 with details.problem when it is not found")
  )
  .add(
    HttpApiEndpoint.get("claims", "/publishers/:slug/claims")
      .setPath(PublisherPath)
      .addSuccess(ClaimList)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
  )
  .add(
    HttpApiEndpoint.post("claim", "/publishers/:slug/claims")
      .setPath(PublisherPath)
      .setPayload(ClaimRequest)
      .addSuccess(PackageClaim, { status: 201 })
      .addError(ValidationFailedWire)
      .addError(BadRequestWire)
      .addError(NotFoundWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Description, "Claim a catalogue package (members): accepted when its clark.publisher names the publisher or a registry maintainer is a member")
  )
  .add(
    HttpApiEndpoint.del("release", "/publishers/:slug/claims/:name")
      .setPath(ClaimPath)
      .addSuccess(PackageClaim)
      .addError(ValidationFailedWire)
      .addError(NotFoundWire)
      .annotate(OpenApi.Description, "Give a claimed package up (owners); its listing keeps no publisher")
  )
  .middleware(Authentication)
  .addError(RateLimitedWire)
{}
