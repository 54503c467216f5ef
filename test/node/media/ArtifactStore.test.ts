/**
 * The SQLite artifact store on a real data dir: durable files (0600, in a
 * 0700 directory), rows by the Clock, the 25 MiB and quota limits, refusals
 * that leave nothing behind, and what a restart finds (files kept, orphans
 * and temporary files swept, rows of a deleted conversation gone).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { maxArtifactBytes } from "../../../schema/node/Artifact.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlArtifactStore from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlConversationStore from "../../../layers/node/sql/SqlConversationStore.js"
import { ArtifactStore, artifactRef } from "../../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "clark-artifacts-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** One life of the node's stores on `dataDir`: build, run `use`, close (as a restart would). */
const withStores = <A, E>(
  dataDir: string,
  use: Effect.Effect<A, E, ArtifactStore | ConversationStore | SqlClient.SqlClient>,
  quotaBytes?: number
) =>
  Effect.scoped(
    Effect.flatMap(
      Layer.build(
        Layer.mergeAll(SqlArtifactStore.layer({ dataDir, quotaBytes }), SqlConversationStore.layer).pipe(
          Layer.provideMerge(NodeDatabase.layer(dataDir))
        )
      ),
      (context) => Effect.provide(use, context)
    )
  )

const newConversation = Effect.flatMap(ConversationStore, (store) => store.create("node_test", null))

const listFiles = (dataDir: string) => fs.readdirSync(SqlArtifactStore.artifactsDir(dataDir)).sort()

const audio = (conversationId: string, bytes: Uint8Array) => ({
  conversationId,
  kind: "media" as const,
  mimeType: "audio/wav",
  name: "a.wav",
  bytes
})

describe("SqlArtifactStore", () => {
  it.scoped("stores the bytes durably with their row, dated by the Clock", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const bytes = new Uint8Array([1, 2, 3, 4, 5])
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const conversation = yield* newConversation
        yield* TestClock.setTime(Date.parse("2030-05-06T07:08:09.010Z"))
        const stored = yield* store.create(audio(conversation.id, bytes))
        const digest = createHash("sha256").update(bytes).digest("hex")
        expect(stored).toEqual({
          artifactId: expect.stringMatching(/^art_/),
          conversationId: conversation.id,
          kind: "media",
          mimeType: "audio/wav",
          name: "a.wav",
          sizeBytes: 5,
          sha256: digest,
          state: "finalized",
          createdAt: "2030-05-06T07:08:09.010Z",
          instanceId: null,
          packageId: null,
          writtenAt: "2030-05-06T07:08:09.010Z"
        })
        expect(artifactRef(stored)).toEqual({
          v: 1,
          artifactId: stored.artifactId,
          kind: "media",
          mimeType: "audio/wav",
          sizeBytes: 5,
          name: "a.wav",
          digest: `sha256:${digest}`
        })
        expect(yield* store.get(stored.artifactId)).toEqual(Option.some(stored))
        expect(yield* store.read(stored.artifactId)).toEqual(Option.some(bytes))
        expect(yield* store.usage).toEqual({ usedBytes: 5, quotaBytes: 1024 * 1024 * 1024 })
        const file = path.join(SqlArtifactStore.artifactsDir(dataDir), stored.artifactId)
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
        expect(fs.statSync(SqlArtifactStore.artifactsDir(dataDir)).mode & 0o777).toBe(0o700)
        expect(listFiles(dataDir)).toEqual([stored.artifactId])
        expect(yield* store.get("art_unknown")).toEqual(Option.none())
        expect(yield* store.read("art_unknown")).toEqual(Option.none())
      }))
    }))

  it.scoped("refuses more than 25 MiB, a missing conversation and a full quota, leaving nothing", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(
        dataDir,
        Effect.gen(function*() {
          const store = yield* ArtifactStore
          const sql = yield* SqlClient.SqlClient
          const conversation = yield* newConversation
          const tooLarge = yield* Effect.flip(store.create(audio(conversation.id, new Uint8Array(maxArtifactBytes + 1))))
          expect(tooLarge).toMatchObject({ _tag: "ArtifactTooLarge", sizeBytes: maxArtifactBytes + 1 })
          const missing = yield* Effect.flip(store.create(audio("conv_missing", new Uint8Array(10))))
          expect(missing).toMatchObject({ _tag: "ConversationNotFound", conversationId: "conv_missing" })
          yield* store.create(audio(conversation.id, new Uint8Array(60)))
          // Exactly filling the quota is allowed; one byte more is not.
          yield* store.create(audio(conversation.id, new Uint8Array(40)))
          const full = yield* Effect.flip(store.create(audio(conversation.id, new Uint8Array(1))))
          expect(full).toEqual(
            expect.objectContaining({ _tag: "ArtifactQuotaExceeded", sizeBytes: 1, usedBytes: 100, quotaBytes: 100 })
          )
          expect((yield* sql`SELECT id FROM artifacts`).length).toBe(2)
          expect(listFiles(dataDir)).toHaveLength(2)
        }),
        100
      )
    }))

  it.scoped("two writes racing for the last room: exactly one is stored", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(
        dataDir,
        Effect.gen(function*() {
          const store = yield* ArtifactStore
          const conversation = yield* newConversation
          const results = yield* Effect.all(
            [store.create(audio(conversation.id, new Uint8Array(60))), store.create(audio(conversation.id, new Uint8Array(60)))],
            { concurrency: 2, mode: "either" }
          )
          expect(results.filter((result) => result._tag === "Right")).toHaveLength(1)
          expect(results.filter((result) => result._tag === "Left").map((result) => result._tag === "Left" && result.left._tag))
            .toEqual(["ArtifactQuotaExceeded"])
          expect(listFiles(dataDir)).toHaveLength(1)
        }),
        100
      )
    }))

  it.scoped("a refusal found only inside the insert's transaction removes the file already written", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const sql = yield* SqlClient.SqlClient
        const conversation = yield* newConversation
        // The conversation disappears between the first check and the insert.
        yield* sql`CREATE TRIGGER vanish AFTER INSERT ON artifacts BEGIN SELECT RAISE(ABORT, 'gone'); END`
        const failed = yield* Effect.exit(store.create(audio(conversation.id, new Uint8Array(10))))
        expect(failed._tag).toBe("Failure")
        expect(listFiles(dataDir)).toEqual([])
        yield* sql`DROP TRIGGER vanish`
      }))
    }))

  it.scoped("after a restart: files kept, orphans and temporary files swept, deleted conversations' files gone", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const bytes = new Uint8Array([9, 8, 7])
      const [kept, dropped] = yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        const sql = yield* SqlClient.SqlClient
        const keep = yield* newConversation
        const drop = yield* newConversation
        const kept = yield* store.create(audio(keep.id, bytes))
        const dropped = yield* store.create(audio(drop.id, bytes))
        // Deleting the conversation cascades to its rows; its file waits for the sweep.
        yield* sql`DELETE FROM conversations WHERE id = ${drop.id}`
        expect(yield* store.get(dropped.artifactId)).toEqual(Option.none())
        return [kept, dropped] as const
      }))
      // What a crash can leave: a temporary file cut short, a renamed file whose row never came.
      const dir = SqlArtifactStore.artifactsDir(dataDir)
      fs.writeFileSync(path.join(dir, ".art_crashed.tmp"), "partial")
      fs.writeFileSync(path.join(dir, "art_withoutRow"), "orphan")
      expect(listFiles(dataDir)).toContain(dropped.artifactId)
      yield* withStores(dataDir, Effect.gen(function*() {
        const store = yield* ArtifactStore
        expect(listFiles(dataDir)).toEqual([kept.artifactId])
        expect(yield* store.get(kept.artifactId)).toEqual(Option.some(kept))
        expect(yield* store.read(kept.artifactId)).toEqual(Option.some(bytes))
        expect(yield* store.usage).toMatchObject({ usedBytes: 3 })
      }))
    }))
})
