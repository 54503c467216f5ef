/**
 * Publishers: organisations with owners and members, the verification of their homepage's domain and the
 * registry packages they claim. Every write is checked against the caller's role and recorded in the audit
 * log in its transaction. The rules that decide (who may change members, what a claim's evidence is, what a
 * verification found) are pure functions below, table-tested.
 */
import { Context, Data, type Effect, Option } from "effect"
import type { Role } from "../../schema/marketplace/Account.js"
import type {
  ClaimEvidence,
  CreatePublisherRequest,
  PackageClaim,
  Publisher,
  PublisherRole,
  UpdatePublisherRequest,
  VerificationChallenge,
  VerificationMethod
} from "../../schema/marketplace/Publishers.js"

export class PublisherNotFound extends Data.TaggedError("PublisherNotFound")<{ readonly slug: string }> {}
export class PublisherExists extends Data.TaggedError("PublisherExists")<{ readonly slug: string }> {}
/** A member doing an owner's part. */
export class NotPermitted extends Data.TaggedError("NotPermitted")<{ readonly reason: string }> {}
export class MemberNotFound extends Data.TaggedError("MemberNotFound")<{ readonly who: string }> {}
/** The change would leave the publisher without an owner. */
export class LastOwner extends Data.TaggedError("LastOwner")<{ readonly slug: string }> {}
export class NoHomepage extends Data.TaggedError("NoHomepage")<{ readonly slug: string }> {}
export class NoChallenge extends Data.TaggedError("NoChallenge")<{ readonly slug: string }> {}
/** The check ran and did not find the token; `problem` says what it found instead. */
export class VerificationFailed extends Data.TaggedError("VerificationFailed")<{
  readonly method: VerificationMethod
  readonly problem: string
}> {}
/** Nothing in the registry shows the package is the publisher's. */
export class ClaimRefused extends Data.TaggedError("ClaimRefused")<{ readonly packageName: string; readonly reason: string }> {}
export class PackageClaimed extends Data.TaggedError("PackageClaimed")<{
  readonly packageName: string
  readonly publisherSlug: string
}> {}
/** Not in the catalogue (submit it first) or not in the registry. */
export class ClaimTargetNotFound extends Data.TaggedError("ClaimTargetNotFound")<{
  readonly packageName: string
  readonly where: "catalogue" | "registry"
}> {}
export class ClaimNotFound extends Data.TaggedError("ClaimNotFound")<{ readonly packageName: string }> {}
/** The registry could not be asked (not configured, unreachable, timed out, an unreadable answer). */
export class RegistryUnreachable extends Data.TaggedError("RegistryUnreachable")<{ readonly problem: string }> {}

/** Who is asking: the credential's user and role (an admin acts as an owner of every publisher). */
export interface Actor {
  readonly userId: string
  readonly role: Role
}

export class Publishers extends Context.Tag("clark/marketplace/Publishers")<Publishers, {
  /** The publishers the actor is a member of, by slug. */
  readonly listMine: (actor: Actor) => Effect.Effect<ReadonlyArray<Publisher>>
  /** Members and admins only; anyone else gets PublisherNotFound (existence is not revealed). */
  readonly get: (actor: Actor, slug: string) => Effect.Effect<Publisher, PublisherNotFound>
  readonly create: (actor: Actor, input: CreatePublisherRequest) => Effect.Effect<Publisher, PublisherExists>
  readonly update: (
    actor: Actor,
    slug: string,
    input: UpdatePublisherRequest
  ) => Effect.Effect<Publisher, PublisherNotFound | NotPermitted>
  /** Adds the account with this e-mail, or changes its role when it is a member already. */
  readonly addMember: (
    actor: Actor,
    slug: string,
    input: { readonly email: string; readonly role: PublisherRole }
  ) => Effect.Effect<Publisher, PublisherNotFound | NotPermitted | MemberNotFound | LastOwner>
  readonly removeMember: (
    actor: Actor,
    slug: string,
    userId: string
  ) => Effect.Effect<Publisher, PublisherNotFound | NotPermitted | MemberNotFound | LastOwner>
  /** The publisher's token (made on first ask, kept until the homepage changes). */
  readonly challenge: (
    actor: Actor,
    slug: string
  ) => Effect.Effect<VerificationChallenge, PublisherNotFound | NotPermitted | NoHomepage>
  readonly verify: (
    actor: Actor,
    slug: string,
    method: VerificationMethod
  ) => Effect.Effect<Publisher, PublisherNotFound | NotPermitted | NoHomepage | NoChallenge | VerificationFailed>
  readonly claims: (actor: Actor, slug: string) => Effect.Effect<ReadonlyArray<PackageClaim>, PublisherNotFound>
  readonly claim: (
    actor: Actor,
    slug: string,
    packageName: string
  ) => Effect.Effect<
    PackageClaim,
    PublisherNotFound | ClaimTargetNotFound | ClaimRefused | PackageClaimed | RegistryUnreachable
  >
  readonly release: (
    actor: Actor,
    slug: string,
    packageName: string
  ) => Effect.Effect<PackageClaim, PublisherNotFound | NotPermitted | ClaimNotFound>
}>() {}

/** What the registry says about a package, as far as a claim reads it. */
export interface RegistryFacts {
  /** `clark.publisher` of the latest version's manifest, when it is a string. */
  readonly manifestPublisher: string | undefined
  /** The packument's maintainers' e-mail addresses. */
  readonly maintainerEmails: ReadonlyArray<string>
}

/**
 * The outside checks, as a service so tests stand a local HTTPS server and a scripted resolver in for the
 * world: the homepage's well-known file, its DNS TXT record and the registry's packument.
 */
export class PublisherChecks extends Context.Tag("clark/marketplace/PublisherChecks")<PublisherChecks, {
  readonly wellKnown: (homepage: URL, token: string) => Effect.Effect<void, VerificationFailed>
  readonly dns: (homepage: URL, token: string) => Effect.Effect<void, VerificationFailed>
  readonly registry: (packageName: string) => Effect.Effect<RegistryFacts, ClaimTargetNotFound | RegistryUnreachable>
}>() {}

// ---------------------------------------------------------------------------
// Rules

export interface MemberRow {
  readonly userId: string
  readonly role: PublisherRole
}

/** The actor's standing in a publisher: its role, "admin" for an admin who is no member, or none. */
export const standing = (members: ReadonlyArray<MemberRow>, actor: Actor): PublisherRole | "admin" | undefined =>
  members.find((member) => member.userId === actor.userId)?.role ?? (actor.role === "admin" ? "admin" : undefined)

const owners = (members: ReadonlyArray<MemberRow>) => members.filter((member) => member.role === "owner").length

/**
 * Why the actor may not give `target` the role `role` (add or change), or none. Owners (and admins) manage
 * members; the last owner cannot become a member.
 */
export const roleChangeProblem = (
  members: ReadonlyArray<MemberRow>,
  actor: Actor,
  target: string,
  role: PublisherRole
): "not-permitted" | "last-owner" | undefined => {
  const mine = standing(members, actor)
  if (mine !== "owner" && mine !== "admin") return "not-permitted"
  const current = members.find((member) => member.userId === target)
  if (current?.role === "owner" && role === "member" && owners(members) === 1) return "last-owner"
  return undefined
}

/**
 * Why the actor may not remove `target`, or none: owners (and admins) remove anyone, a member only itself
 * (leaving); nobody removes the last owner.
 */
export const removalProblem = (
  members: ReadonlyArray<MemberRow>,
  actor: Actor,
  target: string
): "not-permitted" | "not-member" | "last-owner" | undefined => {
  const mine = standing(members, actor)
  if (mine === undefined) return "not-permitted"
  if (mine === "member" && target !== actor.userId) return "not-permitted"
  const current = members.find((member) => member.userId === target)
  if (current === undefined) return "not-member"
  if (current.role === "owner" && owners(members) === 1) return "last-owner"
  return undefined
}

/**
 * What shows a package is the publisher's: the latest manifest's `clark.publisher` naming its slug (the
 * package's author said so), else a registry maintainer's e-mail being a member's (the member can publish
 * it). E-mails compare case-insensitively. None: the claim is refused.
 */
export const claimEvidence = (
  slug: string,
  facts: RegistryFacts,
  memberEmails: ReadonlyArray<string>
): Option.Option<ClaimEvidence> => {
  if (facts.manifestPublisher === slug) return Option.some("manifest")
  const members = new Set(memberEmails.map((email) => email.trim().toLowerCase()))
  return facts.maintainerEmails.some((email) => members.has(email.trim().toLowerCase()))
    ? Option.some("maintainer")
    : Option.none()
}

/** The well-known file proves the token when one of its lines, trimmed, is exactly the token. */
export const fileHoldsToken = (body: string, token: string): boolean =>
  body.split(/\r?\n/).some((line) => line.trim() === token)

/** A TXT record proves it when one record's chunks, joined (long values are split), are exactly the token. */
export const txtHoldsToken = (records: ReadonlyArray<ReadonlyArray<string>>, token: string): boolean =>
  records.some((chunks) => chunks.join("").trim() === token)

export const wellKnownPath = "/.well-known/clark-publisher.txt"

/**
 * Where the file is looked for: https on the homepage's host at the default port, whatever port and path
 * the homepage names. Only the host's administrator serves port 443; on a shared machine anyone may serve a
 * high port, and a proof there would hand them the domain (ACME's http-01 fixes its port for the same reason).
 */
export const wellKnownUrl = (homepage: URL): URL => new URL(wellKnownPath, `https://${homepage.hostname}`)

/** The TXT record's name: `_clark-publisher.` before the homepage's host. */
export const dnsName = (homepage: URL): string => `_clark-publisher.${homepage.hostname}`
