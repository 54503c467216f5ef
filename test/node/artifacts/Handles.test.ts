/**
 * The store keeps a file's write handle open across its chunks (layers/node/sql/ArtifactChunks.ts): one open
 * descriptor however many chunks, closed by finalize, by discard, by the removal of an unfinished file past its
 * 24 hours, after the idle time (TestClock) and when the store closes. Descriptors are read from /proc/self/fd:
 * what the process really holds open.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { idleMillis } from "../../../layers/node/sql/ArtifactChunks.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlArtifactStore from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlConversationStore from "../../../layers/node/sql/SqlConversationStore.js"
import { ArtifactStore, type WidgetOwner } from "../../../services/node/ArtifactStore.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "clark-artifact-handles-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** Descriptors of this process open on the file. */
const openOn = (file: string) =>
  fs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return fs.readlinkSync(path.join("/proc/self/fd", fd)) === file
    } catch {
      return false // closed while listing (the listing's own descriptor among them)
    }
  }).length

/**
 * A handle's close runs in a fiber of its own (FileHandle.close, a libuv round trip): polled on the real clock,
 * for at most 5 s.
 */
const closedOn = (file: string) =>
  Effect.promise(async () => {
    for (let i = 0; i < 500 && openOn(file) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    return openOn(file)
  })

const bytes = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill)

const withStore = <A, E>(dataDir: string, use: (store: ArtifactStore["Type"], widget: WidgetOwner) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      Layer.mergeAll(SqlArtifactStore.layer({ dataDir }), SqlConversationStore.layer).pipe(
        Layer.provideMerge(NodeDatabase.layer(dataDir))
      )
    )
    const store = yield* Effect.provide(ArtifactStore, context)
    const conversation = yield* Effect.provide(Effect.flatMap(ConversationStore, (c) => c.create("node_test", null)), context)
    return yield* use(store, { conversationId: conversation.id, instanceId: "wi_a", packageId: "@clark/notes" })
  }))

describe("write handles of widget files", () => {
  it.scoped("one descriptor across a file's chunks, closed by finalize and by discard", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const fileOf = (id: string) => path.join(SqlArtifactStore.artifactsDir(dataDir), id)
      yield* withStore(dataDir, (store, widget) =>
        Effect.gen(function*() {
          const finished = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
          expect(openOn(fileOf(finished.artifactId))).toBe(0)
          for (let i = 0; i < 5; i++) yield* store.append(widget, finished.artifactId, i * 4, bytes(4, 0x61 + i))
          expect(openOn(fileOf(finished.artifactId))).toBe(1)
          yield* store.finalize(widget, finished.artifactId)
          expect(yield* closedOn(fileOf(finished.artifactId))).toBe(0)
          expect(fs.readFileSync(fileOf(finished.artifactId), "latin1")).toBe("aaaabbbbccccddddeeee")

          const dropped = yield* store.begin(widget, { mimeType: "text/plain", name: "b.txt" })
          yield* store.append(widget, dropped.artifactId, 0, bytes(4))
          expect(openOn(fileOf(dropped.artifactId))).toBe(1)
          yield* store.discard(widget, dropped.artifactId)
          expect(yield* closedOn(fileOf(dropped.artifactId))).toBe(0)
          expect(fs.existsSync(fileOf(dropped.artifactId))).toBe(false)

          // A refused chunk opens nothing.
          const refused = yield* store.begin(widget, { mimeType: "text/plain", name: "c.txt" })
          expect((yield* Effect.flip(store.append(widget, refused.artifactId, 9, bytes(4))))._tag).toBe("ArtifactWriteRefused")
          expect(openOn(fileOf(refused.artifactId))).toBe(0)
        }))
    }))

  it.scoped("closed after the idle time without a chunk, reopened by the next chunk, and when the store closes", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const fileOf = (id: string) => path.join(SqlArtifactStore.artifactsDir(dataDir), id)
      const kept = yield* withStore(dataDir, (store, widget) =>
        Effect.gen(function*() {
          const file = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
          yield* store.append(widget, file.artifactId, 0, bytes(3))
          yield* TestClock.adjust(idleMillis - 1000)
          expect(openOn(fileOf(file.artifactId))).toBe(1)
          // A chunk within the idle time keeps the same handle and restarts its idle time.
          yield* store.append(widget, file.artifactId, 3, bytes(3, 0x62))
          yield* TestClock.adjust(idleMillis - 1000)
          expect(openOn(fileOf(file.artifactId))).toBe(1)
          yield* TestClock.adjust(1000)
          expect(yield* closedOn(fileOf(file.artifactId))).toBe(0)
          yield* store.append(widget, file.artifactId, 6, bytes(3, 0x63))
          expect(openOn(fileOf(file.artifactId))).toBe(1)
          expect(fs.readFileSync(fileOf(file.artifactId), "latin1")).toBe("aaabbbccc")
          return file.artifactId
        }))
      expect(yield* closedOn(fileOf(kept))).toBe(0)
    }))

  it.scoped("an unfinished file removed past its 24 hours leaves no descriptor behind", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const fileOf = (id: string) => path.join(SqlArtifactStore.artifactsDir(dataDir), id)
      yield* withStore(dataDir, (store, widget) =>
        Effect.gen(function*() {
          const file = yield* store.begin(widget, { mimeType: "text/plain", name: "a.txt" })
          // A handle kept open as long as chunks keep coming (the idle time moves with each).
          for (let i = 0; i < 3; i++) {
            yield* store.append(widget, file.artifactId, i, bytes(1))
            yield* TestClock.adjust(idleMillis / 2)
          }
          expect(openOn(fileOf(file.artifactId))).toBe(1)
          yield* TestClock.setTime(Date.parse(file.writtenAt) + 48 * 3_600_000)
          expect((yield* Effect.flip(store.append(widget, file.artifactId, 3, bytes(1))))._tag).toBe("ArtifactNotFound")
          expect(yield* closedOn(fileOf(file.artifactId))).toBe(0)
          expect(fs.existsSync(fileOf(file.artifactId))).toBe(false)
        }))
    }))
})
