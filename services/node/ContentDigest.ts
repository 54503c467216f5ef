/**
 * A package's content digest (DESIGN.md, "Digest"): SHA-256 over its canonical file list. Every approval,
 * install check and cache entry is bound to it, so the form is fixed here and nowhere else:
 *
 *   one line per file, `JSON.stringify([path, size, sha256])` + "\n", files sorted by the UTF-8 bytes of
 *   their `/`-separated relative paths; the digest is `sha256:` + the lowercase hex SHA-256 of those lines.
 *
 * JSON makes any file name unambiguous (a tab or newline in a name cannot forge another line), and byte
 * order is the same on every platform.
 */
import { createHash } from "node:crypto"

export interface FileEntry {
  /** Relative to the package root, `/`-separated. */
  readonly path: string
  readonly size: number
  /** Lowercase hex SHA-256 of the file's bytes. */
  readonly sha256: string
}

export const digestPrefix = "sha256:"

/** The limits of a package folder or unpacked tarball (the spec's install rules). */
export const packageLimits = {
  files: 5_000,
  folders: 5_000,
  depth: 64,
  bytes: 64 * 1024 * 1024
} as const

/**
 * Entries never part of a package, as npm never packs them: version-control folders and the macOS folder
 * file. Everything else in the folder is the package, `node_modules` included (a service may ship its own).
 */
export const ignoredNames: ReadonlySet<string> = new Set([".git", ".svn", ".hg", "CVS", ".DS_Store"])

const byPathBytes = (a: FileEntry, b: FileEntry) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))

/** The canonical list, sorted: what the digest is computed over. */
export const canonicalList = (files: ReadonlyArray<FileEntry>): string =>
  [...files].sort(byPathBytes).map((file) => `${JSON.stringify([file.path, file.size, file.sha256])}\n`).join("")

export const contentDigest = (files: ReadonlyArray<FileEntry>): string =>
  digestPrefix + createHash("sha256").update(canonicalList(files)).digest("hex")
