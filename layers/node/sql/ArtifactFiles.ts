/**
 * The bytes of artifacts on disk, for SqlArtifactStore: every write is synced before the row that counts it is
 * written, so a crash leaves at most bytes no row knows of (swept or cut back at start), never a row without
 * its bytes.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { sniff, type SniffVerdict } from "../../../services/node/ArtifactRules.js"

const temporarySuffix = ".tmp"

const syncDirectory = async (dir: string) => {
  const directory = await fs.open(dir, "r")
  try {
    await directory.sync()
  } finally {
    await directory.close()
  }
}

/** Writes the bytes under their final name so that a crash leaves either nothing or the whole file. */
export const writeDurably = (dir: string, id: string, bytes: Uint8Array) =>
  Effect.acquireUseRelease(
    Effect.sync(() => path.join(dir, `.${id}${temporarySuffix}`)),
    (temporary) =>
      Effect.promise(async () => {
        const handle = await fs.open(temporary, "wx", 0o600)
        try {
          await handle.writeFile(bytes)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await fs.rename(temporary, path.join(dir, id))
        // The rename is durable only once the directory entry is.
        await syncDirectory(dir)
      }),
    // After a successful rename the temporary name no longer exists.
    (temporary) => Effect.promise(() => fs.rm(temporary, { force: true }))
  )

/** An empty file under its final name, its directory entry durable. */
export const createEmpty = (dir: string, id: string) =>
  Effect.promise(async () => {
    const handle = await fs.open(path.join(dir, id), "wx", 0o600)
    await handle.close()
    await syncDirectory(dir)
  })

/**
 * A file open for writing, as a scoped resource: closed when its scope closes. The store keeps one per file being
 * written across its chunks (an `RcMap`), so a chunk pays for its write, not for an open and a close as well.
 *
 * Opened with `O_DSYNC`: each write returns only once its bytes, and the file size that reaches them, are on disk
 * (POSIX synchronized I/O data integrity, what `fdatasync` gives). A chunk is then one system call on one thread
 * pool trip instead of a write and a `datasync` (two trips, each one more wake-up of the event loop).
 */
export const openForWriting = (file: string) =>
  Effect.acquireRelease(
    Effect.promise(() => fs.open(file, fsConstants.O_RDWR | fsConstants.O_DSYNC)),
    (handle) => Effect.promise(() => handle.close())
  )

/** Writes `bytes` at `position` through a handle of `openForWriting`: on disk when it succeeds. */
export const writeAt = (handle: fs.FileHandle, position: number, bytes: Uint8Array) =>
  Effect.promise(async () => {
    let written = 0
    while (written < bytes.byteLength) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.byteLength - written, position + written)
      written += bytesWritten
    }
  })

/** Bytes past what the row counts were never acknowledged: a write cut short by a crash. */
export const cutBackTo = (file: string, sizeBytes: number) =>
  Effect.promise(async () => {
    const stat = await fs.stat(file).catch(() => undefined)
    if (stat !== undefined && stat.size > sizeBytes) await fs.truncate(file, sizeBytes)
  })

export const readRange = (file: string, offset: number, length: number) =>
  Effect.promise(async () => {
    const handle = await fs.open(file, "r")
    try {
      const buffer = Buffer.alloc(length)
      let read = 0
      while (read < length) {
        const { bytesRead } = await handle.read(buffer, read, length - read, offset + read)
        if (bytesRead === 0) break
        read += bytesRead
      }
      return new Uint8Array(buffer.buffer, buffer.byteOffset, read)
    } finally {
      await handle.close()
    }
  })

/**
 * file-type (and strtok3 under it) loaded on the first finalize, not when the node starts: most starts finalize
 * nothing, and evaluating them was part of every start-up (docs/decisions.md, "Start-up: V8's code cache").
 */
let sniffer: Promise<{ readonly detect: typeof import("file-type").fileTypeFromBuffer; readonly sniffable: ReadonlySet<string> }> | undefined
const loadSniffer = () =>
  (sniffer ??= import("file-type").then((module) => ({
    detect: module.fileTypeFromBuffer,
    sniffable: new Set<string>(module.supportedMimeTypes)
  })))
const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Whether the bytes are the declared type (file-type reads the first bytes; text types must be UTF-8). */
export const inspectBytes = (bytes: Uint8Array, declared: string): Effect.Effect<SniffVerdict> =>
  Effect.promise(async () => {
    const { detect, sniffable } = await loadSniffer()
    const detected = await detect(bytes).catch(() => undefined)
    let isUtf8 = true
    try {
      utf8.decode(bytes)
    } catch {
      isUtf8 = false
    }
    return sniff(declared, detected?.mime, isUtf8, (type) => sniffable.has(type))
  })

/** What finalizing needs of a file: the check against the declared type and the digest. */
export const inspect = (file: string, declared: string) =>
  Effect.flatMap(Effect.promise(() => fs.readFile(file)), (bytes) =>
    Effect.map(inspectBytes(bytes, declared), (verdict) => ({
      verdict,
      sha256: createHash("sha256").update(bytes).digest("hex")
    })))

export const isTemporary = (name: string) => name.endsWith(temporarySuffix)
