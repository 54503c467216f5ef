/** Reading packages: listing and search, detail, versions and release coordinates. */
import { Context, type Effect, type Option } from "effect"
import type { CurationStatus, Isolation, PackageDetail, PackageSummary, VersionItem } from "../../schema/marketplace/Package.js"

export type Ordering = "latest" | "name" | "relevance"

/** Where the previous page ended: the last row's sort value and id. */
export interface Keyset {
  readonly value: string | number | null
  readonly id: number
}

export interface PackageQuery {
  /** Full-text terms; empty means no text condition. */
  readonly terms: ReadonlyArray<string>
  readonly category?: string | undefined
  readonly kind?: string | undefined
  readonly isolation?: Isolation | undefined
  readonly platform?: string | undefined
  readonly publisher?: string | undefined
  readonly statuses: ReadonlyArray<CurationStatus>
  readonly ordering: Ordering
  readonly limit: number
  readonly after?: Keyset | undefined
}

export interface PackageSlice {
  readonly items: ReadonlyArray<PackageSummary>
  /** Set when more rows follow the last item. */
  readonly next: Keyset | undefined
}

export interface Release {
  readonly name: string
  readonly version: string
  readonly integrity: string
}

export class PackageStore extends Context.Tag("clark/marketplace/PackageStore")<PackageStore, {
  readonly find: (query: PackageQuery) => Effect.Effect<PackageSlice>
  readonly detail: (name: string, statuses: ReadonlyArray<CurationStatus>) => Effect.Effect<Option.Option<PackageDetail>>
  readonly versions: (
    name: string,
    statuses: ReadonlyArray<CurationStatus>
  ) => Effect.Effect<Option.Option<ReadonlyArray<VersionItem>>>
  /** The named version, or the latest one when `version` is undefined. */
  readonly release: (
    name: string,
    version: string | undefined,
    statuses: ReadonlyArray<CurationStatus>
  ) => Effect.Effect<Option.Option<Release>>
}>() {}
