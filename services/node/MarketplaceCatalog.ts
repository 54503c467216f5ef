/**
 * The marketplace as the node's directory sees it: packages found by a query, and one package's detail.
 * The node talks to the marketplace through the marketplace's own typed client (layers/node/marketplace).
 */
import { Context, type Effect, type Option } from "effect"
import type { PackageDetail } from "../../schema/marketplace/Package.js"

/** The marketplace could not be asked: none is configured, or it did not answer. */
export type CatalogStatus = "ok" | "not-configured" | "unreachable"

export interface CatalogPage {
  readonly status: CatalogStatus
  readonly url: string | null
  readonly packages: ReadonlyArray<PackageDetail>
}

export class MarketplaceCatalog extends Context.Tag("clark/node/MarketplaceCatalog")<MarketplaceCatalog, {
  /** The first page of packages matching `q` (all packages, newest first, without one), with their details. */
  readonly search: (q: string | undefined) => Effect.Effect<CatalogPage>
  /** One package's detail; none when the marketplace does not list it (or cannot be asked). */
  readonly detail: (name: string) => Effect.Effect<Option.Option<PackageDetail>>
}>() {}
