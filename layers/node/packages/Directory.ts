/** PackageDirectory over the package records, the folders on disk and the marketplace catalog. */
import { Clock, DateTime, Effect, Either, Layer, Option } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { PackageDetail } from "../../../schema/marketplace/Package.js"
import type { Listing } from "../../../schema/node/Package.js"
import { readPackageJson } from "../../../services/node/Manifest.js"
import { MarketplaceCatalog } from "../../../services/node/MarketplaceCatalog.js"
import { PackageDirectory } from "../../../services/node/PackageDirectory.js"
import { LocalSourceUnreadable, ManifestInvalid } from "../../../services/node/PackageErrors.js"
import { PackageFolders } from "../../../services/node/PackageFolders.js"
import { type InstalledPackage, PackageRecords } from "../../../services/node/PackageRecords.js"

const installedState = (installed: Option.Option<InstalledPackage>, version: string, digest: string) =>
  Option.match(installed, {
    onNone: () => null,
    onSome: (pkg) => ({
      version: pkg.version,
      digest: pkg.digest,
      installedAt: pkg.installedAt,
      current: pkg.version === version && pkg.digest === digest
    })
  })

const matches = (listing: Listing, q: string | undefined) =>
  q === undefined || q.trim() === "" ||
  q.toLowerCase().split(/\s+/).every((word) => `${listing.name} ${listing.description}`.toLowerCase().includes(word))

export const make = Effect.gen(function*() {
  const records = yield* PackageRecords
  const folders = yield* PackageFolders
  const catalog = yield* MarketplaceCatalog

  /** The folder as a listing: digest by the node, the rest from its package.json. */
  const readLocal = (folder: string, installed: (id: string) => Effect.Effect<Option.Option<InstalledPackage>>) =>
    Effect.gen(function*() {
      const scan = yield* folders.scan(folder)
      const text = yield* Effect.tryPromise({
        try: () => fs.readFile(path.join(folder, "package.json"), "utf8"),
        catch: () => new ManifestInvalid({ path: "", problem: "the folder has no readable package.json" })
      })
      const parsed = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new ManifestInvalid({ path: "", problem: "package.json is not JSON" })
      })
      const pkg = yield* Either.match(readPackageJson(parsed), { onLeft: Effect.fail, onRight: Effect.succeed })
      const description = typeof (parsed as { description?: unknown }).description === "string"
        ? String((parsed as { description: string }).description)
        : ""
      const listing: Listing = {
        packageId: pkg.name,
        source: "local",
        name: pkg.name,
        version: pkg.version,
        description,
        digest: scan.digest,
        contentDigest: scan.digest,
        facets: pkg.clark.facets,
        permissions: pkg.clark.permissions,
        path: folder,
        installed: installedState(yield* installed(pkg.name), pkg.version, scan.digest)
      }
      return listing
    })

  const fromMarketplace = (detail: PackageDetail, installed: Option.Option<InstalledPackage>): Option.Option<Listing> => {
    const latest = detail.latest
    if (latest === null) return Option.none()
    return Option.some({
      packageId: detail.name,
      source: "marketplace",
      name: detail.name,
      version: latest.version,
      description: detail.description,
      digest: latest.registryIntegrity,
      contentDigest: null,
      facets: latest.facets,
      permissions: latest.permissions,
      path: null,
      installed: installedState(installed, latest.version, latest.registryIntegrity)
    })
  }

  const locals = Effect.gen(function*() {
    const sources = yield* records.localSources
    const listings = yield* Effect.forEach(
      sources,
      (source) => Effect.option(readLocal(source.path, records.installedOne)),
      { concurrency: 4 }
    )
    // A folder whose package.json now names another package is listed under that name; the id it was
    // added under keeps pointing at the same folder.
    return listings.flatMap(Option.toArray)
  })

  const list = (q: string | undefined) =>
    Effect.gen(function*() {
      const [local, page] = yield* Effect.all([locals, catalog.search(q)], { concurrency: 2 })
      const ids = new Set(local.map((listing) => listing.packageId))
      const remote = yield* Effect.forEach(page.packages.filter((detail) => !ids.has(detail.name)), (detail) =>
        Effect.map(records.installedOne(detail.name), (installed) => fromMarketplace(detail, installed)))
      return {
        packages: [...local.filter((listing) => matches(listing, q)), ...remote.flatMap(Option.toArray)],
        marketplace: { status: page.status, url: page.url }
      }
    })

  const find = (packageId: string) =>
    Effect.gen(function*() {
      const sources = yield* records.localSources
      const source = sources.find((entry) => entry.packageId === packageId)
      if (source !== undefined) {
        // The person listed this folder: when it cannot be read now, that is the answer, not another listing.
        const local = yield* readLocal(source.path, records.installedOne)
        if (local.packageId === packageId) return Option.some(local)
      }
      const detail = yield* catalog.detail(packageId)
      if (Option.isNone(detail)) return Option.none<Listing>()
      return fromMarketplace(detail.value, yield* records.installedOne(packageId))
    })

  const addLocal = (folder: string) =>
    Effect.gen(function*() {
      if (!path.isAbsolute(folder)) return yield* new LocalSourceUnreadable({ reason: "not-a-folder" })
      const resolved = path.resolve(folder)
      const listing = yield* readLocal(resolved, records.installedOne)
      const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
      yield* records.addLocal({ packageId: listing.packageId, path: resolved, addedAt: at })
      return listing
    })

  return PackageDirectory.of({ list, find, addLocal })
})

export const layer = Layer.effect(PackageDirectory, make)
