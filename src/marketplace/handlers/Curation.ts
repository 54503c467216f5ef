/**
 * Curation routes (scope packages:curate): status and featuring with their
 * log, and editorial collections. Every POST honours an idempotency key.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { MarketplaceApi } from "../../../schema/marketplace/Api.js"
import { CollectionState } from "../../../schema/marketplace/Catalog.js"
import { CurationResult, type SetFeaturedRequest, type SetStatusRequest } from "../../../schema/marketplace/Curation.js"
import { Conflict, NotFound, ValidationFailed } from "../../../schema/marketplace/Errors.js"
import { CatalogStore } from "../../../services/marketplace/CatalogStore.js"
import { type CollectionCommandError, CurationStore } from "../../../services/marketplace/Curation.js"
import { Idempotency, requestHash, withKey } from "../../../services/marketplace/Idempotency.js"
import { requireScope } from "./Scopes.js"

const packageNotFound = ({ name }: { readonly name: string }) =>
  new NotFound({ message: `No package named ${name}` })

const collectionNotFound = (slug: string) => new NotFound({ message: `No collection ${slug}` })

const commandFailure = (error: CollectionCommandError) => {
  switch (error._tag) {
    case "CollectionNotFound":
      return collectionNotFound(error.slug)
    case "CollectionExists":
      return new Conflict({ message: `A collection ${error.slug} exists already` })
    case "PackageNotFound":
      return packageNotFound(error)
    case "NotInCollection":
      return new NotFound({ message: `${error.name} is not in the collection ${error.slug}` })
    case "ReorderMismatch": {
      const parts = [
        error.missing.length > 0 ? `missing ${error.missing.join(", ")}` : undefined,
        error.unexpected.length > 0 ? `not in the collection ${error.unexpected.join(", ")}` : undefined,
        error.repeated.length > 0 ? `named more than once ${error.repeated.join(", ")}` : undefined
      ].filter((part) => part !== undefined)
      return new ValidationFailed({
        message: `packageNames must name exactly the current items: ${parts.join("; ")}`,
        details: {
          issues: [{ path: "packageNames", message: parts.join("; ") }],
          missing: error.missing,
          unexpected: error.unexpected,
          repeated: error.repeated
        }
      })
    }
  }
}

const PackageOutcome = { success: CurationResult, failure: NotFound }
const CollectionOutcome = { success: CollectionState, failure: Schema.Union(NotFound, Conflict, ValidationFailed) }

export const CurationLive = HttpApiBuilder.group(MarketplaceApi, "curation", (handlers) =>
  Effect.gen(function*() {
    const curation = yield* CurationStore
    const catalog = yield* CatalogStore
    const idempotency = yield* Idempotency
    const curator = requireScope("packages:curate")

    const state = (slug: string) =>
      Effect.flatMap(
        catalog.collectionState(slug),
        Option.match({ onNone: () => Effect.fail(collectionNotFound(slug)), onSome: Effect.succeed })
      )

    /** A command on one package, run once per idempotency key. */
    const onPackage = <A extends object>(
      action: "status" | "featured",
      act: (input: A & { readonly name: string; readonly actorId: string }) => ReturnType<typeof curation.setStatus>
    ) =>
    ({ headers, path, payload }: {
      readonly headers: { readonly "idempotency-key"?: string | undefined }
      readonly path: { readonly name: string }
      readonly payload: A
    }) =>
      Effect.gen(function*() {
        const { userId } = yield* curator
        return yield* withKey(idempotency, headers["idempotency-key"], {
          userId,
          route: `POST /curation/packages/{name}/${action}`,
          requestHash: requestHash("POST", `/curation/packages/${path.name}/${action}`, payload)
        }, PackageOutcome, act({ ...payload, name: path.name, actorId: userId }).pipe(Effect.mapError(packageNotFound)))
      })

    return handlers
      .handle("setStatus", onPackage<typeof SetStatusRequest.Type>("status", curation.setStatus))
      .handle("setFeatured", onPackage<typeof SetFeaturedRequest.Type>("featured", curation.setFeatured))
      .handle("collection", ({ path }) => Effect.zipRight(curator, state(path.slug)))
      .handle("collectionCommand", ({ headers, path, payload }) =>
        Effect.gen(function*() {
          const { userId } = yield* curator
          return yield* withKey(idempotency, headers["idempotency-key"], {
            userId,
            route: "POST /curation/collections/{slug}",
            requestHash: requestHash("POST", `/curation/collections/${path.slug}`, payload)
          }, CollectionOutcome, curation.applyCollectionCommand(path.slug, payload, userId).pipe(
            Effect.mapError(commandFailure),
            Effect.zipRight(state(path.slug))
          ))
        }))
  }))
