/**
 * Package reads served from memory while the catalogue has not changed. Each
 * read first asks `CatalogVersion` (one primary-key lookup); when the version
 * moved, everything cached is dropped. Heavy searches (common words, short
 * prefixes) then cost the database once per catalogue change instead of once
 * per request.
 */
import { Effect, Layer } from "effect"
import { LRUCache } from "lru-cache"
import { CatalogVersion } from "../../../services/marketplace/CatalogVersion.js"
import { PackageStore } from "../../../services/marketplace/PackageStore.js"

export interface CacheOptions {
  /** Entries kept at most. */
  readonly maxEntries: number
  /** Approximate bytes kept at most (JSON length of the cached answers). */
  readonly maxBytes: number
}

export const defaultCacheOptions: CacheOptions = { maxEntries: 2000, maxBytes: 32 * 1024 * 1024 }

/** Wraps `store`; answers are plain data, so sharing them between requests is safe. */
export const make = (store: PackageStore["Type"], options: CacheOptions = defaultCacheOptions) =>
  Effect.gen(function*() {
    const version = yield* CatalogVersion
    const cache = new LRUCache<string, { readonly value: unknown }>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      sizeCalculation: (entry) => Math.max(1, JSON.stringify(entry.value)?.length ?? 1)
    })
    let cachedVersion: string | undefined

    const cached = <A>(key: string, read: Effect.Effect<A>): Effect.Effect<A> =>
      Effect.gen(function*() {
        const current = yield* version.current
        if (current !== cachedVersion) {
          cache.clear()
          cachedVersion = current
        }
        const hit = cache.get(key)
        if (hit !== undefined) return hit.value as A
        const value = yield* read
        // A write that committed while reading has moved the version on: keep
        // the answer only under the version it was read at.
        if (cachedVersion === current) cache.set(key, { value })
        return value
      })

    return PackageStore.of({
      find: (query) => cached(`find ${JSON.stringify(query)}`, store.find(query)),
      detail: (name, statuses) => cached(`detail ${JSON.stringify([name, statuses])}`, store.detail(name, statuses)),
      versions: (name, statuses) =>
        cached(`versions ${JSON.stringify([name, statuses])}`, store.versions(name, statuses)),
      release: (name, version, statuses) =>
        cached(`release ${JSON.stringify([name, version ?? null, statuses])}`, store.release(name, version, statuses))
    })
  })

/** The store `underlying` builds, behind the cache. */
export const layer = <R>(underlying: Effect.Effect<PackageStore["Type"], never, R>, options?: CacheOptions) =>
  Layer.effect(PackageStore, Effect.flatMap(underlying, (store) => make(store, options)))
