/**
 * Appending a widget's chunks, for SqlArtifactStore: the hot path of a widget writing a file (issue 15, point 10).
 *
 * Per chunk, two statements and one system call: one query reads the file's row with the widget's and the share's
 * storage in use (and, for `appendAt`, the widget's instance), the bytes are written at the file's end through a
 * handle kept open across the file's chunks, opened `O_DSYNC` so the write returns once they are on disk, then the
 * row's size moves (one statement, its own commit). The durability rule is the store's: the bytes are on disk before
 * the row counts them, so a crash (kill -9 included) leaves at most bytes past the row, cut back at the next start.
 *
 * Handles live in an `RcMap` keyed by artifact id: opened by the first chunk, closed after `idleMillis` without a
 * chunk, at once when the file is finalized or removed (`release`), and all of them when the store's scope closes.
 */
import type { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, RcMap } from "effect"
import { maxArtifactBytes } from "../../../schema/node/Artifact.js"
import {
  ArtifactNotFound,
  ArtifactStorageFull,
  ArtifactWriteRefused,
  InstanceUnknown
} from "../../../services/node/ArtifactErrors.js"
import { removalAt } from "../../../services/node/ArtifactRules.js"
import type { StoredArtifact, WidgetOwner, WidgetPlace } from "../../../services/node/ArtifactStore.js"
import { cutBackTo, openForWriting, writeAt } from "./ArtifactFiles.js"
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
}

type ChunkRefusal = ArtifactNotFound | ArtifactWriteRefused | ArtifactStorageFull

export const makeChunkWriter = (options: ChunkOptions) =>
  Effect.gen(function*() {
    const { sql, fileOf, quotaBytes, instanceQuotaBytes } = options
    const handles = yield* RcMap.make({
      lookup: (artifactId: string) => openForWriting(fileOf(artifactId)),
      idleTimeToLive: Duration.millis(idleMillis)
    })

    /** Closes the file's handle (now, or when the chunk holding it ends). */
    const release = (artifactId: string) => RcMap.invalidate(handles, artifactId)

    /**
     * Everything a chunk's checks need, in one statement that always answers one row: the file's row (its columns
     * null when there is none), the widget's own storage in use (its files, through the index by instance) and the
     * share's (the total the triggers of migration 0016 keep), and with `lookUp` the package of the instance in
     * that conversation (null when it is not there).
     */
    const readForChunk = (widget: WidgetPlace, artifactId: string, lookUp: boolean) =>
      Effect.orDie(Effect.map(
        sql<Row>`SELECT ${
          lookUp
            ? sql`(SELECT package_id FROM widget_instances WHERE id = ${widget.instanceId}
              AND conversation_id = ${widget.conversationId})`
            : sql`NULL`
        } AS instance_package,
          (SELECT used_bytes FROM artifact_totals WHERE id = 1) AS share_used,
          (SELECT COALESCE(SUM(size_bytes), 0) FROM artifacts WHERE conversation_id = ${widget.conversationId}
            AND instance_id = ${widget.instanceId} AND kind = 'widget') AS instance_used,
          a.*
          FROM (SELECT 1) LEFT JOIN artifacts a ON a.id = ${artifactId}`,
        ([row]) => row!
      ))

    /** The checks of a chunk against what `readForChunk` read, then the write and the row's update. */
    const write = (owner: WidgetOwner, artifactId: string, offset: number, bytes: Uint8Array, row: Row) =>
      Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<StoredArtifact, ChunkRefusal> => {
        if (row.id === null || row.id === undefined) return Effect.fail(new ArtifactNotFound({ artifactId }))
        const artifact: StoredArtifact = toArtifact(row)
        // An unfinished file past its 24 hours is gone, as any read of it finds.
        if (artifact.state === "unfinished" && now >= removalAt(artifact.writtenAt)) {
          return Effect.zipRight(
            Effect.zipRight(release(artifactId), options.remove(artifactId)),
            Effect.fail(new ArtifactNotFound({ artifactId }))
          )
        }
        if (!handedTo(artifact, owner)) return Effect.fail(new ArtifactNotFound({ artifactId }))
        if (!madeBy(artifact, owner)) return Effect.fail(new ArtifactWriteRefused({ artifactId, problem: "not-writable" }))
        if (artifact.state === "finalized") return Effect.fail(new ArtifactWriteRefused({ artifactId, problem: "finalized" }))
        if (offset !== artifact.sizeBytes) {
          return Effect.fail(new ArtifactWriteRefused({ artifactId, problem: "offset-mismatch", sizeBytes: artifact.sizeBytes }))
        }
        if (artifact.sizeBytes + bytes.byteLength > maxArtifactBytes) {
          return Effect.fail(new ArtifactWriteRefused({ artifactId, problem: "too-large", limitBytes: maxArtifactBytes }))
        }
        if (Number(row.instanceUsed) + bytes.byteLength > instanceQuotaBytes) {
          return Effect.fail(new ArtifactStorageFull({ scope: "instance", limitBytes: instanceQuotaBytes }))
        }
        if (Number(row.shareUsed) + bytes.byteLength > quotaBytes) {
          return Effect.fail(new ArtifactStorageFull({ scope: "share", limitBytes: quotaBytes }))
        }
        const sizeBytes = artifact.sizeBytes + bytes.byteLength
        const at = DateTime.formatIso(DateTime.unsafeMake(now))
        // Once bytes go out, the write and the row's update finish even if the request is gone: an abandoned write
        // still running could otherwise land after the next chunk at the same offset.
        return Effect.uninterruptible(
          Effect.scoped(Effect.flatMap(RcMap.get(handles, artifactId), (handle) => writeAt(handle, offset, bytes))).pipe(
            // A handle whose write failed is not trusted with the next chunk (a failed sync may forget pages), and
            // whatever part of the chunk landed is cut off: finalize reads the file to its end.
            Effect.onError(() => Effect.zipRight(release(artifactId), cutBackTo(fileOf(artifactId), artifact.sizeBytes))),
            Effect.zipRight(Effect.orDie(sql`UPDATE artifacts SET size_bytes = ${sizeBytes}, written_at = ${at},
              updated_at = ${at} WHERE id = ${artifactId}`)),
            Effect.as({ ...artifact, sizeBytes, writtenAt: at })
          )
        )
      })

    /** Runs under the store's permit, so the checks and the write are one step. */
    const append = (owner: WidgetOwner, artifactId: string, offset: number, bytes: Uint8Array) =>
      Effect.flatMap(readForChunk(owner, artifactId, false), (row) => write(owner, artifactId, offset, bytes, row))

    /** `append` for a widget named by its place: its instance is read with the file, and must be there first. */
    const appendAt = (widget: WidgetPlace, artifactId: string, offset: number, bytes: Uint8Array) =>
      Effect.flatMap(readForChunk(widget, artifactId, true), (row): Effect.Effect<StoredArtifact, ChunkRefusal | InstanceUnknown> =>
        typeof row.instancePackage === "string"
          ? write({ ...widget, packageId: row.instancePackage }, artifactId, offset, bytes, row)
          : Effect.fail(new InstanceUnknown({ instanceId: widget.instanceId })))

    return { append, appendAt, release }
  })
