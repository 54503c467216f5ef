/**
 * Reading package folders on disk: the digest of a folder the person added (its directory listing), and
 * the copy of it into the package cache that the node runs from. The copy is checked against the digest it
 * was asked for on the bytes it wrote, so what runs is exactly what was listed and approved.
 */
import { Context, type Effect } from "effect"
import type { FileEntry } from "./ContentDigest.js"
import type { DigestMismatch, LocalSourceUnreadable, PackageCacheUnavailable } from "./PackageErrors.js"

export interface FolderScan {
  /** Sorted by path. */
  readonly files: ReadonlyArray<FileEntry>
  readonly folders: number
  readonly bytes: number
  readonly digest: string
}

export class PackageFolders extends Context.Tag("clark/node/PackageFolders")<PackageFolders, {
  /** Walks and hashes the folder within the package limits; the user's files are only read. */
  readonly scan: (root: string) => Effect.Effect<FolderScan, LocalSourceUnreadable>
  /**
   * Copies the folder into the cache entry of `expected` and answers its path. The entry appears whole
   * (written aside, then renamed) or not at all; an entry already there is reused. Bytes that do not hash
   * to `expected` (the folder changed since it was listed, or while it was copied) leave nothing behind.
   */
  readonly copyToCache: (
    root: string,
    expected: string
  ) => Effect.Effect<{ readonly path: string; readonly scan: FolderScan }, LocalSourceUnreadable | DigestMismatch | PackageCacheUnavailable>
}>() {}
