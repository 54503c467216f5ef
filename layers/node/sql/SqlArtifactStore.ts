/**
 * ArtifactStore on the node's SQLite database, bytes in files beside it.
 *
 * A file is written first (temporary name, fsync, rename, fsync of the
 * directory), then its row is inserted in a transaction that checks the
 * conversation and the quota again; a refusal removes the file. A crash can
 * therefore leave only a file without a row, never a row without its bytes;
 * the sweep at start removes such files and any temporary file.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { type ArtifactKind, type ArtifactState, maxArtifactBytes } from "../../../schema/node/Artifact.js"
import { makeId } from "../../../services/common/Ids.js"
import {
  ArtifactQuotaExceeded,
  ArtifactStore,
  ArtifactTooLarge,
  ConversationNotFound,
  defaultQuotaBytes,
  type StoredArtifact
} from "../../../services/node/ArtifactStore.js"

export interface Options {
  readonly dataDir: string
  /** Storage for all conversation artifacts together; default 1 GiB. */
  readonly quotaBytes?: number | undefined
}

/** Where the bytes live. Every name in it is an artifact id, or a temporary file while one is written. */
export const artifactsDir = (dataDir: string) => path.join(dataDir, "artifacts")

const temporarySuffix = ".tmp"

type Row = Record<string, unknown>

const toArtifact = (row: Row): StoredArtifact => ({
  artifactId: String(row.id),
  conversationId: String(row.conversationId),
  kind: String(row.kind) as ArtifactKind,
  mimeType: String(row.mimeType),
  name: String(row.name),
  sizeBytes: Number(row.sizeBytes),
  sha256: String(row.sha256 ?? ""),
  state: String(row.state) as ArtifactState,
  createdAt: String(row.createdAt)
})

/** Writes the bytes under their final name so that a crash leaves either nothing or the whole file. */
const writeDurably = (dir: string, id: string, bytes: Uint8Array) =>
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
        const directory = await fs.open(dir, "r")
        try {
          await directory.sync()
        } finally {
          await directory.close()
        }
      }),
    // After a successful rename the temporary name no longer exists.
    (temporary) => Effect.promise(() => fs.rm(temporary, { force: true }))
  )

export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dir = artifactsDir(options.dataDir)
    const quotaBytes = options.quotaBytes ?? defaultQuotaBytes
    const now = Effect.map(Clock.currentTimeMillis, (ms) => DateTime.formatIso(DateTime.unsafeMake(ms)))
    const fileOf = (id: string) => path.join(dir, id)

    yield* Effect.promise(() => fs.mkdir(dir, { recursive: true, mode: 0o700 }))

    // Files left by a crash between writing and inserting, by a write cut
    // short, or by a conversation deleted (its rows cascade, its files stay).
    const known = new Set((yield* sql<Row>`SELECT id FROM artifacts`).map((row) => String(row.id)))
    const orphans = (yield* Effect.promise(() => fs.readdir(dir))).filter((name) => !known.has(name))
    yield* Effect.forEach(orphans, (name) => Effect.promise(() => fs.rm(path.join(dir, name), { force: true })), {
      discard: true
    })
    if (orphans.length > 0) yield* Effect.logInfo("removed artifact files without a row", { count: orphans.length })

    const usedBytes = sql<Row>`SELECT COALESCE(SUM(size_bytes), 0) AS used FROM artifacts`.pipe(
      Effect.map(([row]) => Number(row?.used ?? 0))
    )

    const conversationExists = (conversationId: string) =>
      sql<Row>`SELECT 1 AS found FROM conversations WHERE id = ${conversationId}`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    /** The checks made before writing (to spare the disk) and again inside the insert's transaction. */
    const admit = (conversationId: string, sizeBytes: number) =>
      Effect.gen(function*() {
        if (!(yield* conversationExists(conversationId))) {
          return yield* Effect.fail(new ConversationNotFound({ conversationId }))
        }
        const used = yield* usedBytes
        if (used + sizeBytes > quotaBytes) {
          return yield* Effect.fail(new ArtifactQuotaExceeded({ sizeBytes, usedBytes: used, quotaBytes }))
        }
      })

    const create: ArtifactStore["Type"]["create"] = (input) =>
      Effect.gen(function*() {
        const sizeBytes = input.bytes.byteLength
        if (sizeBytes > maxArtifactBytes) {
          return yield* Effect.fail(new ArtifactTooLarge({ sizeBytes, maxBytes: maxArtifactBytes }))
        }
        yield* admit(input.conversationId, sizeBytes).pipe(Effect.catchTag("SqlError", Effect.die))
        const id = yield* makeId("art")
        const sha256 = createHash("sha256").update(input.bytes).digest("hex")
        yield* writeDurably(dir, id, input.bytes)
        const at = yield* now
        const artifact: StoredArtifact = {
          artifactId: id,
          conversationId: input.conversationId,
          kind: input.kind,
          mimeType: input.mimeType,
          name: input.name,
          sizeBytes,
          sha256,
          state: "finalized",
          createdAt: at
        }
        yield* sql.withTransaction(
          Effect.zipRight(
            admit(input.conversationId, sizeBytes),
            sql`INSERT INTO artifacts ${
              sql.insert({
                id,
                conversationId: artifact.conversationId,
                instanceId: null,
                kind: artifact.kind,
                mimeType: artifact.mimeType,
                name: artifact.name,
                sizeBytes,
                sha256,
                state: artifact.state,
                createdAt: at,
                updatedAt: at
              })
            }`
          )
        ).pipe(
          Effect.catchTag("SqlError", Effect.die),
          // Covers refusals, defects and interruption alike: no file without its row.
          Effect.onExit((exit) =>
            exit._tag === "Success" ? Effect.void : Effect.promise(() => fs.rm(fileOf(id), { force: true }))
          )
        )
        return artifact
      })

    const get: ArtifactStore["Type"]["get"] = (artifactId) =>
      sql<Row>`SELECT * FROM artifacts WHERE id = ${artifactId}`.pipe(
        Effect.map(([row]) => Option.map(Option.fromNullable(row), toArtifact)),
        Effect.orDie
      )

    const read: ArtifactStore["Type"]["read"] = (artifactId) =>
      get(artifactId).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (artifact) =>
            artifact.state === "finalized"
              ? Effect.map(Effect.promise(() => fs.readFile(fileOf(artifact.artifactId))), (bytes) =>
                Option.some(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)))
              : Effect.succeedNone
        }))
      )

    const usage: ArtifactStore["Type"]["usage"] = Effect.map(usedBytes, (used) => ({ usedBytes: used, quotaBytes }))
      .pipe(Effect.orDie)

    return ArtifactStore.of({ create, get, read, usage })
  })

export const layer = (options: Options): Layer.Layer<ArtifactStore, never, SqlClient.SqlClient> =>
  Layer.effect(ArtifactStore, Effect.orDie(make(options)))
