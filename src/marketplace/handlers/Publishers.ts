/**
 * The publisher routes: reads need publishers:read, writes publishers:write; the service decides the owner's
 * part (403), hides publishers from non-members (404) and records every write in the audit log.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { Conflict, Forbidden, InternalError, NotFound } from "../../../schema/marketplace/Errors.js"
import type {
  ClaimNotFound,
  ClaimRefused,
  ClaimTargetNotFound,
  LastOwner,
  MemberNotFound,
  NoChallenge,
  NoHomepage,
  NotPermitted,
  PackageClaimed,
  PublisherNotFound,
  RegistryUnreachable,
  VerificationFailed
} from "../../../services/marketplace/Publishers.js"
import { Publishers } from "../../../services/marketplace/Publishers.js"
import { requireScope } from "./Scopes.js"

type PublisherError =
  | PublisherNotFound
  | NotPermitted
  | MemberNotFound
  | LastOwner
  | NoHomepage
  | NoChallenge
  | VerificationFailed
  | ClaimRefused
  | PackageClaimed
  | ClaimTargetNotFound
  | ClaimNotFound
  | RegistryUnreachable

/** The wire error each refusal becomes, so every route declares exactly what its refusals can be. */
type WireOf<E> = E extends PublisherNotFound | MemberNotFound | ClaimTargetNotFound | ClaimNotFound ? NotFound
  : E extends NotPermitted | ClaimRefused ? Forbidden
  : E extends RegistryUnreachable ? InternalError
  : Conflict

const toWire = (error: PublisherError): NotFound | Forbidden | Conflict | InternalError => {
  switch (error._tag) {
    case "PublisherNotFound":
      return new NotFound({ message: `No publisher ${error.slug}` })
    case "MemberNotFound":
      return new NotFound({
        message: error.who.includes("@") ? `No account with the e-mail ${error.who}` : `No member ${error.who}`
      })
    case "ClaimTargetNotFound":
      return new NotFound({
        message: error.where === "catalogue"
          ? `No package named ${error.packageName} in the catalogue: submit it first`
          : `The registry has no package named ${error.packageName}`
      })
    case "ClaimNotFound":
      return new NotFound({ message: `The publisher holds no claim of ${error.packageName}` })
    case "NotPermitted":
      return new Forbidden({ message: error.reason })
    case "ClaimRefused":
      return new Forbidden({ message: `The claim of ${error.packageName} is refused: ${error.reason}`, details: { reason: error.reason } })
    case "LastOwner":
      return new Conflict({ message: `${error.slug} would have no owner left: make another member an owner first` })
    case "NoHomepage":
      return new Conflict({ message: `${error.slug} has no homepage: set one before verifying` })
    case "NoChallenge":
      return new Conflict({ message: `${error.slug} has no verification token yet: ask for the challenge first` })
    case "VerificationFailed":
      return new Conflict({
        message: `The ${error.method} verification failed: ${error.problem}`,
        details: { method: error.method, problem: error.problem }
      })
    case "PackageClaimed":
      return new Conflict({
        message: `${error.packageName} is held by the publisher ${error.publisherSlug}`,
        details: { publisher: error.publisherSlug }
      })
    case "RegistryUnreachable":
      // Not the client's fault and not a defect: said plainly (the problem never carries the registry's URL).
      return new InternalError({ message: `The registry could not be asked: ${error.problem}` })
  }
}

const refusals = <A, E extends PublisherError>(effect: Effect.Effect<A, E>): Effect.Effect<A, WireOf<E>> =>
  Effect.catchAll(effect, (error) => Effect.fail(toWire(error) as WireOf<E>))

export const PublishersLive = HttpApiBuilder.group(MarketplaceApi, "publishers", (handlers) =>
  Effect.gen(function*() {
    const publishers = yield* Publishers
    const reader = requireScope("publishers:read")
    const writer = requireScope("publishers:write")
    return handlers
      .handle("list", () => Effect.flatMap(reader, (actor) => Effect.map(publishers.listMine(actor), (items) => ({ items }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(writer, (actor) =>
          publishers.create(actor, payload).pipe(
            Effect.catchTag("PublisherExists", ({ slug }) => Effect.fail(new Conflict({ message: `A publisher ${slug} exists already` })))
          )))
      .handle("get", ({ path }) =>
        Effect.flatMap(reader, (actor) => refusals(publishers.get(actor, path.slug))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.update(actor, path.slug, payload))))
      .handle("addMember", ({ path, payload }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.addMember(actor, path.slug, payload))))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.removeMember(actor, path.slug, path.userId))))
      .handle("challenge", ({ path }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.challenge(actor, path.slug))))
      .handle("verify", ({ path, payload }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.verify(actor, path.slug, payload.method))))
      .handle("claims", ({ path }) =>
        Effect.flatMap(reader, (actor) =>
          refusals(publishers.claims(actor, path.slug)).pipe(Effect.map((items) => ({ items })))))
      .handle("claim", ({ path, payload }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.claim(actor, path.slug, payload.packageName))))
      .handle("release", ({ path }) =>
        Effect.flatMap(writer, (actor) => refusals(publishers.release(actor, path.slug, path.name))))
  }))
