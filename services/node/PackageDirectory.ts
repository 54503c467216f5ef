/**
 * The node's directory of installable packages: the marketplace's listings merged with the local folders
 * the person added, each with what is installed of it. A local folder's listing is read afresh each time
 * (its digest is the node's own), so a change on disk shows at once.
 */
import { Context, type Effect, type Option } from "effect"
import type { Listing } from "../../schema/node/Package.js"
import type { CatalogStatus } from "./MarketplaceCatalog.js"
import type { LocalSourceUnreadable, ManifestError } from "./PackageErrors.js"

export interface DirectoryPage {
  readonly packages: ReadonlyArray<Listing>
  readonly marketplace: { readonly status: CatalogStatus; readonly url: string | null }
}

export class PackageDirectory extends Context.Tag("clark/node/PackageDirectory")<PackageDirectory, {
  /** Local listings matching `q` (all without one), then the marketplace's first page; a local one shadows a
   * marketplace listing of the same package id. A local folder that cannot be read is left out. */
  readonly list: (q: string | undefined) => Effect.Effect<DirectoryPage>
  /** One listing by package id, local first; a listed folder that cannot be read now fails with why. */
  readonly find: (packageId: string) => Effect.Effect<Option.Option<Listing>, LocalSourceUnreadable | ManifestError>
  /** Reads the folder as a package and lists it under its package.json name. */
  readonly addLocal: (path: string) => Effect.Effect<Listing, LocalSourceUnreadable | ManifestError>
}>() {}
