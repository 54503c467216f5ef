/**
 * The durability rule of chunks with write handles kept open between chunks: every chunk the node acknowledged is
 * on disk when the node (the real CLI, its own process) is killed with SIGKILL right after the last answer, the
 * handle still open; a new node on the same data dir finds the file at that size and finishes it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import { artifactsDir } from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import { maxChunkBytes } from "../../../schema/node/Artifact.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { exited, spawnNode } from "../../support/NodeProcess.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"

/** The widget's placement as the node stores it, written to the data dir the running node uses. */
const place = (dataDir: string, conversationId: string) =>
  Effect.scoped(Effect.flatMap(
    Layer.build(SqlWidgetInstances.layer.pipe(Layer.provide(NodeDatabase.layer(dataDir)))),
    (context) =>
      Effect.provide(
        Effect.flatMap(WidgetInstances, (instances) =>
          instances.place({
            conversationId,
            packageId: "@clark/notes",
            version: "1.0.0",
            contentDigest: "sha256:0",
            widgetId: "board",
            props: {},
            bindings: [],
            offeredActions: [],
            taskId: null
          })),
        context
      )
  ))

describe("widget file chunks and a crash", () => {
  it.scoped("every chunk acknowledged before a SIGKILL is there after a restart", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const chunks = [0x61, 0x62, 0x63].map((fill) => Buffer.alloc(maxChunkBytes, fill))
      const { artifactId, widget } = yield* Effect.scoped(Effect.gen(function*() {
        const node = yield* spawnNode({ dataDir, script: { rules: [] }, appSecret: "crash-test-app-secret" })
        const created = yield* node.fetchJson("POST", "/conversations", {})
        const conversationId = created.body.conversationId as string
        const instance = yield* place(dataDir, conversationId)
        const widget = `/conversations/${conversationId}/widgets/${instance.instanceId}`
        const begun = yield* node.fetchJson("POST", `${widget}/artifacts`, { mimeType: "text/plain", name: "log.txt" })
        expect(begun.status).toBe(201)
        const artifactId = begun.body.artifactRef.artifactId as string
        let offset = 0
        for (const chunk of chunks) {
          const written = yield* node.fetchJson("POST", `${widget}/artifacts/${artifactId}/chunks`, {
            offset,
            contentBase64: chunk.toString("base64")
          })
          offset += chunk.byteLength
          expect({ status: written.status, sizeBytes: written.body.artifactRef?.sizeBytes }).toEqual({ status: 200, sizeBytes: offset })
        }
        // Killed right after the last answer: the node still holds the file open for the next chunk.
        node.child.kill("SIGKILL")
        yield* Effect.promise(() => exited(node.child))
        expect(node.child.signalCode).toBe("SIGKILL")
        return { artifactId, widget }
      }))

      yield* Effect.gen(function*() {
        const node = yield* TestNode
        const found = yield* node.request("GET", `/artifacts/${artifactId}`)
        expect(found.status).toBe(200)
        expect(found.body).toMatchObject({ state: "unfinished", artifactRef: { sizeBytes: 3 * maxChunkBytes } })
        expect(fs.statSync(path.join(artifactsDir(dataDir), artifactId)).size).toBe(3 * maxChunkBytes)
        // The widget goes on where the node acknowledged, and finishes the file.
        const more = yield* node.request("POST", `${widget}/artifacts/${artifactId}/chunks`, {
          body: { offset: 3 * maxChunkBytes, contentBase64: Buffer.from("end").toString("base64") }
        })
        expect(more.status).toBe(200)
        const finalized = yield* node.request("POST", `${widget}/artifacts/${artifactId}/finalize`, { body: {} })
        expect(finalized.status).toBe(200)
        expect(fs.readFileSync(path.join(artifactsDir(dataDir), artifactId)).equals(Buffer.concat([...chunks, Buffer.from("end")])))
          .toBe(true)
      }).pipe(Effect.provide(NodeServer.layer({ model: "none", dataDir })))
    }), { timeout: 120_000 })
})
