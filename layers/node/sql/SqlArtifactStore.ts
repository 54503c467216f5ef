/**
 * ArtifactStore on the node's SQLite database, bytes in files beside it.
 *
 * Bytes reach the disk (synced) before the row that counts them: a file written whole is renamed into place
 * and then inserted, a chunk is written at the file's end and then the row's size moves. A crash can therefore
 * leave only bytes no row knows of, never a row without its bytes; the sweep at start removes files without a
 * row and cuts an unfinished file back to the size its row acknowledged.
 *
 * Every change runs under one permit, so the checks of a write (where the file ends, the widget's 128 MiB,
 * the 1 GiB share) and the write itself are one step for concurrent requests.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Queue } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { maxArtifactBytes, maxInstanceStorageBytes } from "../../../schema/node/Artifact.js"
import { makeId } from "../../../services/common/Ids.js"
import {
  ArtifactNotCreator,
  ArtifactNotFinalized,
  ArtifactNotFound,
  ArtifactStorageFull,
  ArtifactWriteRefused
} from "../../../services/node/ArtifactErrors.js"
import { grantHolds, grantMillis, removalAt, sanitizeName } from "../../../services/node/ArtifactRules.js"
import {
  ArtifactQuotaExceeded,
  ArtifactStore,
  ArtifactTooLarge,
  attachmentRef,
  ConversationNotFound,
  defaultQuotaBytes,
  type StoredArtifact,
  type WidgetOwner
} from "../../../services/node/ArtifactStore.js"
import { handedTo, madeBy, type Row, rowOf, toArtifact } from "./ArtifactRows.js"
import { makeChunkWriter } from "./ArtifactChunks.js"
import { createEmpty, cutBackTo, inspect, inspectBytes, isTemporary, readRange, writeDurably } from "./ArtifactFiles.js"

export interface Options {
  readonly dataDir: string
  /** Storage for all conversation artifacts together; default 1 GiB. */
  readonly quotaBytes?: number | undefined
  /** Storage of one widget's own files; default 128 MiB. */
  readonly instanceQuotaBytes?: number | undefined
}

/** Where the bytes live. Every name in it is an artifact id, or a temporary file while one is written. */
export const artifactsDir = (dataDir: string) => path.join(dataDir, "artifacts")

export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dir = artifactsDir(options.dataDir)
    const quotaBytes = options.quotaBytes ?? defaultQuotaBytes
    const instanceQuotaBytes = options.instanceQuotaBytes ?? maxInstanceStorageBytes
    const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => DateTime.formatIso(DateTime.unsafeMake(ms)))
    const fileOf = (id: string) => path.join(dir, id)
    const lock = yield* Effect.makeSemaphore(1)
    /** Told when a file begins: the sweeper may have been waiting for any unfinished file at all. */
    const begun = yield* Queue.sliding<void>(1)
    const serially = lock.withPermits(1)

    yield* Effect.promise(() => fs.mkdir(dir, { recursive: true, mode: 0o700 }))

    // Files left by a crash between writing and inserting, by a write cut short, or by a conversation deleted
    // (its rows cascade, its files stay); unfinished files cut back to what their rows acknowledged.
    const rows = yield* sql<Row>`SELECT id, state, size_bytes FROM artifacts`
    const known = new Set(rows.map((row) => String(row.id)))
    const orphans = (yield* Effect.promise(() => fs.readdir(dir))).filter((name) => isTemporary(name) || !known.has(name))
    yield* Effect.forEach(orphans, (name) => Effect.promise(() => fs.rm(path.join(dir, name), { force: true })), {
      discard: true
    })
    if (orphans.length > 0) yield* Effect.logInfo("removed artifact files without a row", { count: orphans.length })
    yield* Effect.forEach(
      rows.filter((row) => row.state === "unfinished"),
      (row) => cutBackTo(fileOf(String(row.id)), Number(row.sizeBytes)),
      { discard: true }
    )

    const usedBytes = Effect.orDie(
      // Kept by triggers on every change of the table (migration 0016): exact, without a scan of every row.
      Effect.map(sql<Row>`SELECT used_bytes AS used FROM artifact_totals WHERE id = 1`, ([row]) => Number(row?.used ?? 0))
    )
    /** The widget's own files; files handed to it are not counted. */
    const instanceBytes = (owner: WidgetOwner) =>
      Effect.orDie(Effect.map(
        sql<Row>`SELECT COALESCE(SUM(size_bytes), 0) AS used FROM artifacts
          WHERE conversation_id = ${owner.conversationId} AND instance_id = ${owner.instanceId} AND kind = 'widget'`,
        ([row]) => Number(row?.used ?? 0)
      ))

    const conversationExists = (conversationId: string) =>
      Effect.orDie(Effect.map(sql<Row>`SELECT 1 AS found FROM conversations WHERE id = ${conversationId}`, (r) => r.length > 0))

    /** The checks made before writing a whole file (to spare the disk) and again inside the insert's transaction. */
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

    const removeFile = (id: string) => Effect.promise(() => fs.rm(fileOf(id), { force: true }))

    /** Deletes the row (its attachment cascades), then the bytes. */
    const removeRow = (id: string) => Effect.zipRight(Effect.orDie(sql`DELETE FROM artifacts WHERE id = ${id}`), removeFile(id))

    const chunks = yield* makeChunkWriter({ sql, fileOf, quotaBytes, instanceQuotaBytes, remove: removeRow })

    /** Closes the file's write handle, if it has one, and removes the file. */
    const remove = (id: string) => Effect.zipRight(chunks.release(id), removeRow(id))

    const fetchRow = (artifactId: string) =>
      Effect.orDie(Effect.map(sql<Row>`SELECT * FROM artifacts WHERE id = ${artifactId}`, ([row]) =>
        Option.map(Option.fromNullable(row), toArtifact)))

    /** The row, unless it is an unfinished file past its 24 hours: that one is removed now. */
    const current = (artifactId: string) =>
      Effect.gen(function*() {
        const found = yield* fetchRow(artifactId)
        if (Option.isNone(found) || found.value.state !== "unfinished") return found
        if ((yield* Clock.currentTimeMillis) < removalAt(found.value.writtenAt)) return found
        // Not under the permit: callers holding it come here too, and removing twice is harmless.
        yield* remove(artifactId)
        return Option.none<StoredArtifact>()
      })

    /** Inserts a finalized file written whole; on any failure no file stays without its row. */
    const insertWhole = <E>(
      fields: Omit<StoredArtifact, "artifactId" | "sha256" | "state" | "createdAt" | "writtenAt" | "sizeBytes">,
      bytes: Uint8Array,
      admitted: Effect.Effect<void, E>
    ) =>
      Effect.gen(function*() {
        const id = yield* makeId("art")
        const sha256 = createHash("sha256").update(bytes).digest("hex")
        yield* writeDurably(dir, id, bytes)
        const at = yield* nowIso
        const artifact: StoredArtifact = {
          ...fields,
          artifactId: id,
          sizeBytes: bytes.byteLength,
          sha256,
          state: "finalized",
          createdAt: at,
          writtenAt: at
        }
        yield* sql.withTransaction(Effect.zipRight(admitted, sql`INSERT INTO artifacts ${sql.insert(rowOf(artifact))}`))
          .pipe(Effect.catchTag("SqlError", Effect.die), Effect.onExit((exit) => exit._tag === "Success" ? Effect.void : removeFile(id)))
        return artifact
      })

    const create: ArtifactStore["Type"]["create"] = (input) =>
      Effect.gen(function*() {
        const sizeBytes = input.bytes.byteLength
        if (sizeBytes > maxArtifactBytes) {
          return yield* Effect.fail(new ArtifactTooLarge({ sizeBytes, maxBytes: maxArtifactBytes }))
        }
        yield* admit(input.conversationId, sizeBytes)
        const { bytes, ...fields } = input
        return yield* insertWhole({ ...fields, instanceId: null, packageId: null }, bytes, admit(input.conversationId, sizeBytes))
      })

    const get: ArtifactStore["Type"]["get"] = current

    const read: ArtifactStore["Type"]["read"] = (artifactId) =>
      current(artifactId).pipe(
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

    /** Refuses a write that would take the widget past its own storage or all artifacts past the share. */
    const room = (owner: WidgetOwner, adding: number) =>
      Effect.gen(function*() {
        const held = yield* instanceBytes(owner)
        // A new (empty) file is refused once the widget holds its whole storage; a chunk once it would go past it.
        if (adding === 0 ? held >= instanceQuotaBytes : held + adding > instanceQuotaBytes) {
          return yield* new ArtifactStorageFull({ scope: "instance", limitBytes: instanceQuotaBytes })
        }
        if ((yield* usedBytes) + adding > quotaBytes) {
          return yield* new ArtifactStorageFull({ scope: "share", limitBytes: quotaBytes })
        }
      })

    const begin: ArtifactStore["Type"]["begin"] = (owner, file) =>
      serially(Effect.gen(function*() {
        if (!(yield* conversationExists(owner.conversationId))) {
          return yield* new ConversationNotFound({ conversationId: owner.conversationId })
        }
        yield* room(owner, 0)
        const id = yield* makeId("art")
        const at = yield* nowIso
        const artifact: StoredArtifact = {
          artifactId: id,
          conversationId: owner.conversationId,
          instanceId: owner.instanceId,
          packageId: owner.packageId,
          kind: "widget",
          mimeType: file.mimeType,
          name: file.name,
          sizeBytes: 0,
          sha256: "",
          state: "unfinished",
          createdAt: at,
          writtenAt: at
        }
        yield* createEmpty(dir, id)
        yield* Effect.orDie(sql`INSERT INTO artifacts ${sql.insert(rowOf(artifact))}`).pipe(
          Effect.onExit((exit) => exit._tag === "Success" ? Effect.void : removeFile(id))
        )
        yield* Queue.offer(begun, undefined)
        return artifact
      }))

    const append: ArtifactStore["Type"]["append"] = (owner, artifactId, offset, bytes) =>
      serially(chunks.append(owner, artifactId, offset, bytes))

    const appendAt: ArtifactStore["Type"]["appendAt"] = (widget, artifactId, offset, bytes) =>
      serially(chunks.appendAt(widget, artifactId, offset, bytes))

    const finalize: ArtifactStore["Type"]["finalize"] = (owner, artifactId) =>
      serially(Effect.gen(function*() {
        const found = yield* current(artifactId)
        if (Option.isNone(found) || !handedTo(found.value, owner)) return yield* new ArtifactNotFound({ artifactId })
        const artifact = found.value
        if (artifact.state === "finalized") return artifact
        const { verdict, sha256 } = yield* inspect(fileOf(artifactId), artifact.mimeType)
        if (verdict._tag === "Disagrees") {
          return yield* new ArtifactWriteRefused({ artifactId, problem: "type-mismatch", found: verdict.found })
        }
        const at = yield* nowIso
        yield* Effect.orDie(sql`UPDATE artifacts SET state = 'finalized', sha256 = ${sha256}, updated_at = ${at}
          WHERE id = ${artifactId}`)
        // No chunk follows a finalize: its handle closes now, not after the idle time.
        yield* chunks.release(artifactId)
        return { ...artifact, state: "finalized" as const, sha256 }
      }))

    const pick: ArtifactStore["Type"]["pick"] = (owner, file) =>
      serially(Effect.gen(function*() {
        const verdict = yield* inspectBytes(file.bytes, file.mimeType)
        if (verdict._tag === "Disagrees") {
          return yield* new ArtifactWriteRefused({ artifactId: null, problem: "type-mismatch", found: verdict.found })
        }
        const admitted = Effect.gen(function*() {
          if (!(yield* conversationExists(owner.conversationId))) {
            return yield* new ConversationNotFound({ conversationId: owner.conversationId })
          }
          if ((yield* usedBytes) + file.bytes.byteLength > quotaBytes) {
            return yield* new ArtifactStorageFull({ scope: "share", limitBytes: quotaBytes })
          }
        })
        yield* admitted
        return yield* insertWhole(
          {
            conversationId: owner.conversationId,
            instanceId: owner.instanceId,
            packageId: owner.packageId,
            kind: "picked",
            mimeType: file.mimeType,
            name: sanitizeName(file.name, file.mimeType)
          },
          file.bytes,
          admitted
        )
      }))

    /**
     * A finalized file this widget may read: one it made (whenever), or one handed to it within its grant's
     * 24 hours. Anything else is not found, as if it did not exist.
     */
    const readable = (owner: WidgetOwner, artifactId: string) =>
      Effect.gen(function*() {
        const found = yield* current(artifactId)
        if (Option.isNone(found) || !handedTo(found.value, owner)) return yield* new ArtifactNotFound({ artifactId })
        const artifact = found.value
        if (!madeBy(artifact, owner) && !grantHolds(artifact.writtenAt, yield* Clock.currentTimeMillis)) {
          return yield* new ArtifactNotFound({ artifactId })
        }
        if (artifact.state !== "finalized") return yield* new ArtifactNotFinalized({ artifactId })
        return artifact
      })

    const readFor: ArtifactStore["Type"]["readFor"] = (owner, artifactId, offset, length) =>
      Effect.gen(function*() {
        const artifact = yield* readable(owner, artifactId)
        const start = Math.min(offset, artifact.sizeBytes)
        const bytes = yield* readRange(fileOf(artifactId), start, Math.min(length, artifact.sizeBytes - start))
        return { artifact, offset: start, bytes, eof: start + bytes.byteLength >= artifact.sizeBytes }
      })

    const attach: ArtifactStore["Type"]["attach"] = (owner, artifactId, name) =>
      serially(Effect.gen(function*() {
        const artifact = yield* readable(owner, artifactId)
        // Using a file the widget made counts only within its grant, as for a file handed to it.
        if (!grantHolds(artifact.writtenAt, yield* Clock.currentTimeMillis)) {
          return yield* new ArtifactNotFound({ artifactId })
        }
        const [existing] = yield* Effect.orDie(sql<Row>`SELECT id, name FROM artifact_attachments WHERE artifact_id = ${artifactId}`)
        if (existing !== undefined) {
          return { artifact, attachmentRef: attachmentRef(artifact, { attachmentId: String(existing.id), name: String(existing.name) }) }
        }
        const attachment = {
          attachmentId: yield* makeId("att"),
          name: sanitizeName(name ?? artifact.name, artifact.mimeType)
        }
        yield* Effect.orDie(sql`INSERT INTO artifact_attachments ${
          sql.insert({ id: attachment.attachmentId, artifactId, name: attachment.name, createdAt: yield* nowIso })
        }`)
        return { artifact, attachmentRef: attachmentRef(artifact, attachment) }
      }))

    const discard: ArtifactStore["Type"]["discard"] = (owner, artifactId) =>
      serially(Effect.gen(function*() {
        const found = yield* fetchRow(artifactId)
        if (Option.isNone(found) || found.value.conversationId !== owner.conversationId) {
          return yield* new ArtifactNotFound({ artifactId })
        }
        if (!madeBy(found.value, owner)) return yield* new ArtifactNotCreator({ artifactId })
        yield* remove(artifactId)
        return found.value
      }))

    const sweep: ArtifactStore["Type"]["sweep"] = serially(Effect.gen(function*() {
      const cutoff = DateTime.formatIso(DateTime.unsafeMake((yield* Clock.currentTimeMillis) - grantMillis))
      const stale = yield* Effect.orDie(sql<Row>`SELECT id FROM artifacts WHERE state = 'unfinished' AND written_at <= ${cutoff}`)
      yield* Effect.forEach(stale, (row) => remove(String(row.id)), { discard: true })
      return stale.length
    }))

    // The sweeper sleeps until the oldest unfinished file is due (or, with none, until one begins), so a clock
    // moved far ahead wakes it once, not once per interval.
    const nextRemoval = Effect.orDie(Effect.map(
      sql<Row>`SELECT MIN(written_at) AS at FROM artifacts WHERE state = 'unfinished'`,
      ([row]) => (row?.at === null || row?.at === undefined ? undefined : removalAt(String(row.at)))
    ))
    yield* Effect.gen(function*() {
      const due = yield* nextRemoval
      if (due === undefined) return yield* Queue.take(begun)
      const now = yield* Clock.currentTimeMillis
      if (due > now) return yield* Effect.race(Effect.sleep(due - now), Queue.take(begun))
      yield* sweep
    }).pipe(Effect.forever, Effect.forkScoped)

    return ArtifactStore.of({
      create,
      get,
      read,
      usage,
      begin,
      append,
      appendAt,
      finalize,
      pick,
      readFor,
      attach,
      discard,
      sweep
    })
  })

export const layer = (options: Options): Layer.Layer<ArtifactStore, never, SqlClient.SqlClient> =>
  Layer.scoped(ArtifactStore, Effect.orDie(make(options)))
