/**
 * Appending a widget's chunks, for SqlArtifactStore: the hot path of a widget writing a file (issue 15, point 10).
 *
 * Per chunk: one query reads the file's row with the widget's and the share's storage in use, the bytes are written
 * at the file's end through a handle kept open across the file's chunks and `datasync`ed, then the row's size moves
 * (one statement, its own commit). The durability rule is the store's: the bytes are on disk before the row counts
 * them, so a crash (kill -9 included) leaves at most bytes past the row, cut back at the next start.
 *
 * Handles live in an `RcMap` keyed by artifact id: opened by the first chunk, closed after `idleMillis` without a
 * chunk, at once when the file is finalized or removed (`release`), and all of them when the store's scope closes.
 */
import type { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, RcMap } from "effect"
import { maxArtifactBytes } from "../../../schema/node/Artifact.js"
import { ArtifactNotFound, ArtifactStorageFull, ArtifactWriteRefused } from "../../../services/node/ArtifactErrors.js"
import { removalAt } from "../../../services/node/ArtifactRules.js"
import type { StoredArtifact, WidgetOwner } from "../../../services/node/ArtifactStore.js"
import { openForWriting, writeAt } from "./ArtifactFiles.js"
import { handedTo, madeBy, type Row, toArtifact } from "./ArtifactRows.js"

/** How long a file's handle stays open after its last chunk: a widget writing a file sends chunk after chunk. */
export const idleMillis = 30_000

export interface ChunkOptions {
  readonly sql: SqlClient.SqlClient
  readonly fileOf: (artifactId: string) => string
  readonly quotaBytes: number
  readonly instanceQuotaBytes: number
  /** The store's removal of a file (row, then bytes); the writer releases the file's handle first. */
  readonly remove: (artifactId: string) => Effect.Effect<void>
  readonly nowIso: Effect.Effect<string>
}

export const makeChunkWriter = (options: ChunkOptions) =>
  Effect.gen(function*() {
    const { sql, fileOf, quotaBytes, instanceQuotaBytes, nowIso } = options
    const handles = yield* RcMap.make({
      lookup: (artifactId: string) => openForWriting(fileOf(artifactId)),
      idleTimeToLive: Duration.millis(idleMillis)
    })

    /** Closes the file's handle (now, or when the chunk holding it ends). */
    const release = (artifactId: string) => RcMap.invalidate(handles, artifactId)

    /** The row and the storage in use, in one statement: the widget's own files and the share's. */
    const rowWithUsage = (owner: WidgetOwner, artifactId: string) =>
      Effect.orDie(Effect.map(
        sql<Row>`SELECT a.*,
          (SELECT COALESCE(SUM(size_bytes), 0) FROM artifacts) AS share_used,
          (SELECT COALESCE(SUM(size_bytes), 0) FROM artifacts WHERE conversation_id = ${owner.conversationId}
            AND instance_id = ${owner.instanceId} AND kind = 'widget') AS instance_used
          FROM artifacts a WHERE a.id = ${artifactId}`,
        ([row]) => row
      ))

    /** Runs under the store's permit, so the checks and the write are one step. */
    const append = (owner: WidgetOwner, artifactId: string, offset: number, bytes: Uint8Array) =>
      Effect.gen(function*() {
        const row = yield* rowWithUsage(owner, artifactId)
        if (row === undefined) return yield* new ArtifactNotFound({ artifactId })
        const artifact: StoredArtifact = toArtifact(row)
        // An unfinished file past its 24 hours is gone, as any read of it finds.
        if (artifact.state === "unfinished" && (yield* Clock.currentTimeMillis) >= removalAt(artifact.writtenAt)) {
          yield* release(artifactId)
          yield* options.remove(artifactId)
          return yield* new ArtifactNotFound({ artifactId })
        }
        if (!handedTo(artifact, owner)) return yield* new ArtifactNotFound({ artifactId })
        if (!madeBy(artifact, owner)) return yield* new ArtifactWriteRefused({ artifactId, problem: "not-writable" })
        if (artifact.state === "finalized") return yield* new ArtifactWriteRefused({ artifactId, problem: "finalized" })
        if (offset !== artifact.sizeBytes) {
          return yield* new ArtifactWriteRefused({ artifactId, problem: "offset-mismatch", sizeBytes: artifact.sizeBytes })
        }
        if (artifact.sizeBytes + bytes.byteLength > maxArtifactBytes) {
          return yield* new ArtifactWriteRefused({ artifactId, problem: "too-large", limitBytes: maxArtifactBytes })
        }
        const held = Number(row.instanceUsed)
        if (held + bytes.byteLength > instanceQuotaBytes) {
          return yield* new ArtifactStorageFull({ scope: "instance", limitBytes: instanceQuotaBytes })
        }
        if (Number(row.shareUsed) + bytes.byteLength > quotaBytes) {
          return yield* new ArtifactStorageFull({ scope: "share", limitBytes: quotaBytes })
        }
        // Once bytes go out, the write and the row's update finish even if the request is gone: an abandoned write
        // still running could otherwise land after the next chunk at the same offset.
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          yield* Effect.scoped(Effect.flatMap(RcMap.get(handles, artifactId), (handle) => writeAt(handle, offset, bytes)))
            // A handle whose write failed is not trusted with the next chunk (a failed fsync may forget pages).
            .pipe(Effect.onError(() => release(artifactId)))
          const at = yield* nowIso
          const sizeBytes = artifact.sizeBytes + bytes.byteLength
          yield* Effect.orDie(sql`UPDATE artifacts SET size_bytes = ${sizeBytes}, written_at = ${at}, updated_at = ${at}
            WHERE id = ${artifactId}`)
          return { ...artifact, sizeBytes, writtenAt: at }
        }))
      })

    return { append, release }
  })
