/** What an account owns: publisher memberships and listings, and its deletion. */
import { Context, Data, type Effect, type Option } from "effect"
import type { DeletedAccount, OwnedListing } from "../../schema/marketplace/Account.js"
import type { UnknownUser } from "./Credentials.js"

export type PublisherRole = "owner" | "member"

/** The account is the last owner of publishers that other members still belong to. */
export class SoleOwner extends Data.TaggedError("SoleOwner")<{ readonly publishers: ReadonlyArray<string> }> {}
export class UnknownPublisher extends Data.TaggedError("UnknownPublisher")<{ readonly slug: string }> {}

export class AccountStore extends Context.Tag("clark/marketplace/AccountStore")<AccountStore, {
  /** Listings of every publisher the user belongs to, in any curation state, by name. */
  readonly ownedListings: (userId: string) => Effect.Effect<ReadonlyArray<OwnedListing>>
  /**
   * Removes the account and everything tied to it in one transaction:
   * credentials, sessions, OAuth grants, device links, media, memberships, and
   * the publishers it was the only member of (their listings stay, unowned).
   * None when the account no longer exists.
   */
  readonly deleteAccount: (userId: string) => Effect.Effect<Option.Option<DeletedAccount["removed"]>, SoleOwner>
  /** Adds the user to the publisher, or changes their role there. */
  readonly setPublisherMember: (input: {
    readonly email: string
    readonly publisherSlug: string
    readonly role: PublisherRole
  }) => Effect.Effect<void, UnknownUser | UnknownPublisher>
}>() {}
