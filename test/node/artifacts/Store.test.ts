/**
 * The widget file flow of the SQLite artifact store on a real data dir: the widget's 128 MiB and the 1 GiB share
 * (small limits here, same code), chosen files not counted, chunks only at the end, concurrent chunks, what a
 * restart finds after a write cut short, and the removal of unfinished files on the TestClock.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlArtifactStore from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlConversationStore from "../../../layers/node/sql/SqlConversationStore.js"
import { ArtifactStore, type WidgetOwner } from "../../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "clark-widget-files-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const withStores = <A, E>(
  dataDir: string,
  use: Effect.Effect<A, E, ArtifactStore | ConversationStore | SqlClient.SqlClient>,
  limits: { readonly quotaBytes?: number; readonly instanceQuotaBytes?: number } = {}
) =>
  Effect.scoped(
    Effect.flatMap(
      Layer.build(
        Layer.mergeAll(SqlArtifactStore.layer({ dataDir, ...limits }), SqlConversationStore.layer).pipe(
          Layer.provideMerge(NodeDatabase.layer(dataDir))
        )
      ),
      (context) => Effect.provide(use, context)
    )
  )

const owners = Effect.gen(function*() {
  const conversation = yield* Effect.flatMap(ConversationStore, (store) => store.create("node_test", null))
  const widget: WidgetOwner = { conversationId: conversation.id, instanceId: "wi_a", packageId: "@clark/notes" }
  const other: WidgetOwner = { ...widget, instanceId: "wi_b" }
  return { widget, other }
})

const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill)
const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) => (Exit.isFailure(exit) ? exit.cause : undefined))
const tagOf = <A, E extends { _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error) => error)

describe("widget files in the store", () => {
  it.scoped("appends chunks only at the end and fixes the bytes at finalize", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget } = yield* owners
        const file = yield* store.begin(widget, { mimeType: "text/plain", name: "notes.txt" })
        expect([file.state, file.sizeBytes, file.kind]).toEqual(["unfinished", 0, "widget"])
        yield* store.append(widget, file.artifactId, 0, bytes(5))
        const wrong = yield* tagOf(store.append(widget, file.artifactId, 3, bytes(5)))
        expect(wrong).toMatchObject({ _tag: "ArtifactWriteRefused", problem: "offset-mismatch", sizeBytes: 5 })
        const grown = yield* store.append(widget, file.artifactId, 5, bytes(5, 0x62))
        expect(grown.sizeBytes).toBe(10)
        expect(fs.readFileSync(path.join(SqlArtifactStore.artifactsDir(dataDir), file.artifactId)).toString()).toBe(
          "aaaaabbbbb"
        )
        const done = yield* store.finalize(widget, file.artifactId)
        expect(done.state).toBe("finalized")
        expect(yield* tagOf(store.append(widget, file.artifactId, 10, bytes(1)))).toMatchObject({ problem: "finalized" })
        // A second finalize answers the file as it is.
        expect((yield* store.finalize(widget, file.artifactId)).sha256).toBe(done.sha256)
      }))
    }))

  it.scoped("of two identical chunks sent at once, exactly one is written", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget } = yield* owners
        const file = yield* store.begin(widget, { mimeType: "text/plain", name: "x.txt" })
        const results = yield* Effect.all(
          Array.from({ length: 6 }, () => Effect.either(store.append(widget, file.artifactId, 0, bytes(100)))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Right")).toHaveLength(1)
        expect(results.filter((r) => r._tag === "Left").map((r) => (r as any).left.problem)).toEqual(
          Array(5).fill("offset-mismatch")
        )
        expect(fs.statSync(path.join(SqlArtifactStore.artifactsDir(dataDir), file.artifactId)).size).toBe(100)
      }))
    }))

  it.scoped("counts a widget's own files against its storage, not the files handed to it", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget, other } = yield* owners
        const a = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
        yield* store.append(widget, a.artifactId, 0, bytes(800))
        // A chosen file of 900 bytes: not counted against the 1,000 of the widget.
        yield* store.pick(widget, { name: "c.txt", mimeType: "text/plain", bytes: bytes(900) })
        yield* store.append(widget, a.artifactId, 800, bytes(200))
        const over = yield* tagOf(store.append(widget, a.artifactId, 1000, bytes(1)))
        expect(over).toMatchObject({ _tag: "ArtifactStorageFull", scope: "instance", limitBytes: 1000 })
        // Holding all of it, the widget cannot begin another file; another widget can.
        expect(yield* tagOf(store.begin(widget, { mimeType: "text/plain", name: "b.txt" }))).toMatchObject({
          _tag: "ArtifactStorageFull",
          scope: "instance"
        })
        const b = yield* store.begin(other, { mimeType: "text/plain", name: "b.txt" })
        // The share (2,500) holds 1,900 now: 600 more fit, 601 do not.
        expect(yield* tagOf(store.append(other, b.artifactId, 0, bytes(601)))).toMatchObject({ scope: "share" })
        yield* store.append(other, b.artifactId, 0, bytes(600))
        // Discarding frees the widget's storage.
        yield* store.discard(widget, a.artifactId)
        yield* store.begin(widget, { mimeType: "text/plain", name: "again.txt" })
        expect(fs.existsSync(path.join(SqlArtifactStore.artifactsDir(dataDir), a.artifactId))).toBe(false)
      }), { instanceQuotaBytes: 1000, quotaBytes: 2500 })
    }))

  it.scoped("keeps the share's total exact through every change of the table, a conversation's deletion included", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const sql = yield* SqlClient.SqlClient
        const { widget } = yield* owners
        /** The total the store counts against (kept by triggers) and a SUM of the rows as they are. */
        const counted = Effect.gen(function*() {
          const [row] = yield* sql<{ readonly used: number }>`SELECT COALESCE(SUM(size_bytes), 0) AS used FROM artifacts`
          return { total: (yield* store.usage).usedBytes, summed: Number(row!.used) }
        })
        const expectExact = (bytes: number) =>
          Effect.map(counted, (now) => expect(now).toEqual({ total: bytes, summed: bytes }))

        const a = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
        yield* store.append(widget, a.artifactId, 0, bytes(700))
        yield* store.append(widget, a.artifactId, 700, bytes(300))
        yield* store.pick(widget, { name: "p.txt", mimeType: "text/plain", bytes: bytes(400) })
        const media = yield* store.create({
          conversationId: widget.conversationId,
          kind: "media",
          mimeType: "text/plain",
          name: "m.txt",
          bytes: bytes(500)
        })
        yield* expectExact(1900)
        // A refused chunk (the share is 2,500) changes nothing.
        expect(yield* tagOf(store.append(widget, a.artifactId, 1000, bytes(601)))).toMatchObject({ scope: "share" })
        yield* expectExact(1900)
        yield* store.finalize(widget, a.artifactId)
        yield* store.discard(widget, (yield* store.begin(widget, { mimeType: "text/plain", name: "b.txt" })).artifactId)
        yield* expectExact(1900)

        // A second conversation's file, then the first conversation deleted outside the store: its rows cascade,
        // and the room they held is free again for the next chunk.
        const second = yield* Effect.flatMap(ConversationStore, (c) => c.create("node_test", null))
        const other: WidgetOwner = { conversationId: second.id, instanceId: "wi_c", packageId: "@clark/notes" }
        const c = yield* store.begin(other, { mimeType: "text/plain", name: "c.txt" })
        yield* store.append(other, c.artifactId, 0, bytes(600))
        expect(yield* tagOf(store.append(other, c.artifactId, 600, bytes(1)))).toMatchObject({ scope: "share" })
        yield* sql`DELETE FROM conversations WHERE id = ${widget.conversationId}`
        expect(Option.isNone(yield* store.get(media.artifactId))).toBe(true)
        yield* expectExact(600)
        yield* store.append(other, c.artifactId, 600, bytes(1900))
        yield* expectExact(2500)
      }), { quotaBytes: 2500 })
    }))

  it.scoped("starts the share's total from the rows an older database already has (migration 0016)", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const sql = yield* SqlClient.SqlClient
        const { widget } = yield* owners
        const a = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
        yield* store.append(widget, a.artifactId, 0, bytes(321))
        yield* store.pick(widget, { name: "p.txt", mimeType: "text/plain", bytes: bytes(79) })
        // The database as it stood before migration 0016.
        for (const trigger of ["insert", "delete", "resize"]) yield* sql.unsafe(`DROP TRIGGER artifact_totals_${trigger}`)
        yield* sql`DROP TABLE artifact_totals`
        yield* sql`DELETE FROM clark_migrations WHERE migration_id = 16`
      }))
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        expect((yield* store.usage).usedBytes).toBe(400)
      }))
    }))

  it.scoped("cuts a file back to what its row acknowledged after a write cut short, and keeps acknowledged chunks", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const { widget, id } = yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget } = yield* owners
        const file = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
        yield* store.append(widget, file.artifactId, 0, bytes(10))
        return { widget, id: file.artifactId }
      }))
      // A chunk written to disk whose row never moved: the node stopped in between.
      fs.appendFileSync(path.join(SqlArtifactStore.artifactsDir(dataDir), id), "unacknowledged")
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        expect(fs.statSync(path.join(SqlArtifactStore.artifactsDir(dataDir), id)).size).toBe(10)
        const grown = yield* store.append(widget, id, 10, bytes(2, 0x7a))
        expect(grown.sizeBytes).toBe(12)
        const done = yield* store.finalize(widget, id)
        expect(done.state).toBe("finalized")
        const read = yield* store.readFor(widget, id, 0, 100)
        expect(Buffer.from(read.bytes).toString()).toBe("aaaaaaaaaazz")
      }))
    }))

  it.scoped("removes an unfinished file 24 hours after its last write, and nothing finalized", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget } = yield* owners
        const dir = SqlArtifactStore.artifactsDir(dataDir)
        const kept = yield* store.begin(widget, { mimeType: "text/plain", name: "kept.txt" })
        yield* store.append(widget, kept.artifactId, 0, bytes(3))
        yield* store.finalize(widget, kept.artifactId)
        const file = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
        yield* TestClock.adjust("23 hours")
        yield* store.append(widget, file.artifactId, 0, bytes(3))
        yield* TestClock.adjust("23 hours")
        // 46 hours after it began, 23 after its last write: still there.
        expect(Option.isSome(yield* store.get(file.artifactId))).toBe(true)
        const untouched = yield* store.begin(widget, { mimeType: "text/plain", name: "b.txt" })
        yield* TestClock.adjust("1 hour")
        // 24 hours after its last write: a read removes it at once.
        expect(Option.isNone(yield* store.get(file.artifactId))).toBe(true)
        // The sweeper woke at the same instant and may have deleted the row first, its bytes a moment later: a
        // sweep by hand waits for it (nothing else is due now).
        yield* store.sweep
        expect(fs.existsSync(path.join(dir, file.artifactId))).toBe(false)
        expect(yield* tagOf(store.append(widget, file.artifactId, 3, bytes(1)))).toMatchObject({ _tag: "ArtifactNotFound" })
        // One nobody reads is removed by the sweep (the sweeper wakes when it is due; here also by hand, which
        // waits for a sweep already running).
        yield* TestClock.adjust("24 hours")
        yield* store.sweep
        expect(fs.existsSync(path.join(dir, untouched.artifactId))).toBe(false)
        expect(Option.isNone(yield* store.get(untouched.artifactId))).toBe(true)
        expect(fs.existsSync(path.join(dir, kept.artifactId))).toBe(true)
        // The widget still reads its finished file after its grant ran out.
        expect((yield* store.readFor(widget, kept.artifactId, 0, 10)).bytes.byteLength).toBe(3)
      }))
    }))

  it.scoped("refuses bytes that are not the declared type and leaves the file unfinished", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const { widget } = yield* owners
        const file = yield* store.begin(widget, { mimeType: "image/png", name: "a.png" })
        yield* store.append(widget, file.artifactId, 0, new TextEncoder().encode("not a picture"))
        expect(yield* tagOf(store.finalize(widget, file.artifactId))).toMatchObject({ problem: "type-mismatch" })
        expect(Option.map(yield* store.get(file.artifactId), (a) => a.state)).toEqual(Option.some("unfinished"))
        expect(yield* failure(store.readFor(widget, file.artifactId, 0, 10))).toBeDefined()
      }))
    }))
})
