/**
 * The artifact routes through the real node on the test clock: a widget writes, finalizes, reads, attaches and
 * discards its files; the person picks and exports; the global routes read by id. Widgets are placed in the
 * node's own database (the same data dir) the way the placement stores them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import { artifactsDir } from "../../../layers/node/sql/SqlArtifactStore.js"
import * as SqlWidgetInstances from "../../../layers/node/sql/SqlWidgetInstances.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { conversation, typedClient, wire } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { contentDisposition } from "./Support.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ model: "none" }))

/** Places a widget of `packageId` in the conversation; answers its instance id. */
const place = (conversationId: string, packageId = "@clark/notes") =>
  Effect.flatMap(TestNode, (node) =>
    Effect.scoped(Effect.flatMap(
      Layer.build(SqlWidgetInstances.layer.pipe(Layer.provide(NodeDatabase.layer(node.dataDir)))),
      (context) =>
        Effect.map(
          Effect.provide(
            Effect.flatMap(WidgetInstances, (instances) =>
              instances.place({
                conversationId,
                packageId,
                version: "1.0.0",
                contentDigest: "sha256:0",
                widgetId: "board",
                props: {},
                bindings: [],
                offeredActions: [],
                taskId: null
              })),
            context
          ),
          (instance) => instance.instanceId
        )
    )))

/** The 8-byte PNG signature, an IHDR chunk and an IEND: enough for file-type to read a PNG. */
const png = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201" +
    "e5272ede0000000049454e44ae426082",
  "hex"
)
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64")
/** A chunk as the typed client sends it: bytes, which the contract encodes as base64 on the wire. */
const bytesOf = (bytes: Uint8Array | string) => typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes

const widgetPath = (id: string, instanceId: string) => `/conversations/${id}/widgets/${instanceId}`

describe("widget artifact routes", () => {
  it.scoped("create, chunks at the end, finalize, read in pieces, then the global routes and the export", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const instanceId = yield* place(id)
      const w = { id, instanceId }

      const created = yield* wire(client.widgetArtifacts.create({
        path: w,
        payload: { mimeType: "image/png", name: "../../Holiday\u200B snap" },
        withResponse: true
      }))
      expect(created.status).toBe(201)
      const ref = created.body.artifactRef
      expect(ref).toEqual({
        v: 1,
        artifactId: expect.stringMatching(/^art_/),
        kind: "widget",
        mimeType: "image/png",
        sizeBytes: 0,
        name: "Holiday snap.png"
      })
      const artifactId = ref.artifactId
      const chunk = (offset: number, bytes: Uint8Array) =>
        wire(client.widgetArtifacts.writeChunk({
          path: { ...w, artifactId },
          payload: { offset, contentBase64: bytesOf(bytes) },
          withResponse: true
        }))
      expect((yield* chunk(0, png.subarray(0, 20))).body.artifactRef.sizeBytes).toBe(20)
      const misplaced = yield* chunk(10, png.subarray(20))
      expect(misplaced).toMatchObject({
        status: 400,
        body: { code: "INVALID_INPUT", reason: "offset-mismatch", field: "offset", sizeBytes: 20 }
      })
      expect((yield* chunk(20, png.subarray(20))).body.artifactRef.sizeBytes).toBe(png.length)

      // While being written: no bytes anywhere.
      const early = yield* wire(client.widgetArtifacts.read({ path: { ...w, artifactId }, urlParams: {}, withResponse: true }))
      expect(early).toMatchObject({ status: 409, body: { code: "ARTIFACT_NOT_FINALIZED" } })
      expect((yield* node.request("GET", `/artifacts/${artifactId}/content`)).body.code).toBe("ARTIFACT_NOT_FINALIZED")

      const finalized = yield* wire(client.widgetArtifacts.finalize({ path: { ...w, artifactId }, withResponse: true }))
      expect(finalized.status).toBe(200)
      expect(finalized.body.artifactRef.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect((yield* chunk(png.length, png.subarray(0, 1))).body).toMatchObject({ code: "INVALID_INPUT", reason: "finalized" })

      const first = yield* wire(client.widgetArtifacts.read({
        path: { ...w, artifactId },
        urlParams: { offset: 0, length: 30 },
        withResponse: true
      }))
      expect(first.body).toMatchObject({ offset: 0, eof: false, contentBase64: b64(png.subarray(0, 30)) })
      const rest = yield* wire(client.widgetArtifacts.read({
        path: { ...w, artifactId },
        urlParams: { offset: 30 },
        withResponse: true
      }))
      expect(rest.body).toMatchObject({ offset: 30, eof: true, contentBase64: b64(png.subarray(30)) })

      const got = yield* wire(client.artifacts.get({ path: { artifactId }, withResponse: true }))
      expect(got.body).toMatchObject({ state: "finalized", conversationId: id, instanceId, artifactRef: finalized.body.artifactRef })

      const content = yield* Effect.promise(() =>
        fetch(`${node.baseUrl}/artifacts/${artifactId}/content`, { headers: node.headers("person") }))
      expect(content.status).toBe(200)
      expect(content.headers.get("content-type")).toBe("image/png")
      expect(content.headers.get("x-content-type-options")).toBe("nosniff")
      expect(Buffer.from(yield* Effect.promise(() => content.arrayBuffer()))).toEqual(png)
      // Machine clients read refs, never bytes.
      expect((yield* node.request("GET", `/artifacts/${artifactId}/content`, { as: "cli-api" })).body.code).toBe("PERSON_ONLY")
      expect((yield* node.request("GET", `/artifacts/${artifactId}`, { as: "cli-api" })).status).toBe(200)

      const exported = yield* Effect.promise(() =>
        fetch(`${node.baseUrl}/artifacts/${artifactId}/export`, {
          method: "POST",
          headers: { ...node.headers("person"), "content-type": "application/json" },
          body: JSON.stringify({ suggestedName: "/tmp/Ferien Übersicht.exe" })
        }))
      expect(exported.status).toBe(200)
      const disposition = contentDisposition(exported.headers.get("content-disposition") ?? "")
      expect(disposition).toEqual({
        type: "attachment",
        filename: "Ferien ?bersicht.exe.png",
        filenameStar: "Ferien Übersicht.exe.png"
      })
      expect(Buffer.from(yield* Effect.promise(() => exported.arrayBuffer()))).toEqual(png)
      const ascii = yield* Effect.promise(() =>
        fetch(`${node.baseUrl}/artifacts/${artifactId}/export`, {
          method: "POST",
          headers: { ...node.headers("person"), "content-type": "application/json" },
          body: "{}"
        }))
      expect(contentDisposition(ascii.headers.get("content-disposition") ?? "")).toEqual({
        type: "attachment",
        filename: "Holiday snap.png",
        filenameStar: "Holiday snap.png"
      })
      const machine = yield* node.request("POST", `/artifacts/${artifactId}/export`, { as: "cli-api", body: {} })
      expect([machine.status, machine.body.code]).toEqual([403, "PERSON_ONLY"])
    })))

  it.scoped("refuses a finalize whose bytes are not the declared type, and keeps the file unfinished", () =>
    withNode(Effect.gen(function*() {
      const client = yield* typedClient()
      const id = yield* conversation
      const w = { id, instanceId: yield* place(id) }
      const created = yield* client.widgetArtifacts.create({ path: w, payload: { mimeType: "image/png" } })
      const artifactId = (created as any).artifactRef.artifactId
      yield* client.widgetArtifacts.writeChunk({
        path: { ...w, artifactId },
        payload: { offset: 0, contentBase64: bytesOf("%PDF-1.7\nnot a picture") }
      })
      const refused = yield* wire(client.widgetArtifacts.finalize({ path: { ...w, artifactId }, withResponse: true }))
      expect(refused).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", reason: "type-mismatch" } })
      expect((yield* client.artifacts.get({ path: { artifactId } })).state).toBe("unfinished")
    })))

  it.scoped("answers INSTANCE_UNKNOWN for a widget not in the conversation and keeps widgets' files apart", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const elsewhere = yield* conversation
      const mine = yield* place(id)
      const theirs = yield* place(id, "@clark/other")
      const foreign = yield* place(elsewhere)

      for (const instanceId of ["wi_nope", foreign]) {
        const response = yield* wire(client.widgetArtifacts.create({
          path: { id, instanceId },
          payload: { mimeType: "text/plain" },
          withResponse: true
        }))
        expect(response).toMatchObject({ status: 404, body: { code: "INSTANCE_UNKNOWN" } })
      }

      const created = yield* client.widgetArtifacts.create({ path: { id, instanceId: mine }, payload: { mimeType: "text/plain" } })
      const artifactId = (created as any).artifactRef.artifactId
      yield* client.widgetArtifacts.writeChunk({ path: { id, instanceId: mine, artifactId }, payload: { offset: 0, contentBase64: bytesOf("hi") } })
      // The person's chunk reads its widget's instance with the file: an instance not in the conversation is
      // answered first, whatever the file; another widget of the conversation does not find the file.
      const chunkAs = (instanceId: string, file: string) =>
        wire(client.widgetArtifacts.writeChunk({
          path: { id, instanceId, artifactId: file },
          payload: { offset: 2, contentBase64: bytesOf("!") },
          withResponse: true
        }))
      for (const [instanceId, file] of [["wi_nope", artifactId], [foreign, artifactId], ["wi_nope", "art_nope"]] as const) {
        expect(yield* chunkAs(instanceId, file)).toMatchObject({ status: 404, body: { code: "INSTANCE_UNKNOWN" } })
      }
      expect(yield* chunkAs(theirs, artifactId)).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })
      expect(yield* chunkAs(mine, "art_nope")).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })
      expect((yield* client.artifacts.get({ path: { artifactId } })).artifactRef.sizeBytes).toBe(2)
      yield* client.widgetArtifacts.finalize({ path: { id, instanceId: mine, artifactId } })

      const read = yield* wire(client.widgetArtifacts.read({
        path: { id, instanceId: theirs, artifactId },
        urlParams: {},
        withResponse: true
      }))
      expect(read).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })
      const discard = yield* wire(client.widgetArtifacts.discard({ path: { id, instanceId: theirs, artifactId }, withResponse: true }))
      expect(discard).toMatchObject({ status: 403, body: { code: "ARTIFACT_NOT_CREATOR" } })
      const unknown = yield* wire(client.artifacts.get({ path: { artifactId: "art_nope" }, withResponse: true }))
      expect(unknown).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })

      const discarded = yield* wire(client.widgetArtifacts.discard({ path: { id, instanceId: mine, artifactId }, withResponse: true }))
      expect(discarded).toEqual({ status: 200, body: { discarded: true, artifactId } })
      expect(fs.existsSync(path.join(artifactsDir(node.dataDir), artifactId))).toBe(false)
      expect((yield* node.request("GET", `/artifacts/${artifactId}`)).body.code).toBe("ARTIFACT_NOT_FOUND")
    })))

  it.scoped("attaches under a sanitised name once; attaching again answers the same attachment", () =>
    withNode(Effect.gen(function*() {
      const client = yield* typedClient()
      const id = yield* conversation
      const w = { id, instanceId: yield* place(id) }
      const created = yield* client.widgetArtifacts.create({ path: w, payload: { mimeType: "text/csv", name: "data" } })
      const artifactId = (created as any).artifactRef.artifactId
      yield* client.widgetArtifacts.writeChunk({ path: { ...w, artifactId }, payload: { offset: 0, contentBase64: bytesOf("a,b\n1,2\n") } })
      const early = yield* wire(client.widgetArtifacts.attach({ path: { ...w, artifactId }, payload: {}, withResponse: true }))
      expect(early).toMatchObject({ status: 409, body: { code: "ARTIFACT_NOT_FINALIZED" } })
      yield* client.widgetArtifacts.finalize({ path: { ...w, artifactId } })
      const first = yield* wire(client.widgetArtifacts.attach({
        path: { ...w, artifactId },
        payload: { name: "C:\\reports\\Q3\u202E<final>" },
        withResponse: true
      }))
      expect(first.status).toBe(201)
      expect(first.body.attachmentRef).toEqual({
        attachmentId: expect.stringMatching(/^att_/),
        name: "Q3final.csv",
        mimeType: "text/csv",
        sizeBytes: 8
      })
      const again = yield* client.widgetArtifacts.attach({ path: { ...w, artifactId }, payload: { name: "other.csv" } })
      expect((again as any).attachmentRef).toEqual(first.body.attachmentRef)
    })))

  it.scoped("pick is the person's; a chosen file's grant ends after 24 hours, a made and finished file stays readable", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const w = { id, instanceId: yield* place(id) }
      const payload = { name: "scan.png", mimeType: "image/png", contentBase64: b64(png), accept: ["image/*"] }

      const machine = yield* node.request("POST", `${widgetPath(id, w.instanceId)}/artifacts/pick`, { as: "cli-api", body: payload })
      expect([machine.status, machine.body.code]).toEqual([403, "PERSON_ONLY"])
      const refused = yield* wire(client.widgetArtifacts.pick({ path: w, payload: { ...payload, accept: [".pdf"] }, withResponse: true }))
      expect(refused).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", reason: "not-accepted" } })

      const picked = yield* wire(client.widgetArtifacts.pick({ path: w, payload, withResponse: true }))
      expect(picked.status).toBe(201)
      expect(picked.body.artifactRef).toMatchObject({ kind: "picked", name: "scan.png", sizeBytes: png.length })
      const chosen = picked.body.artifactRef.artifactId

      const own = yield* client.widgetArtifacts.create({ path: w, payload: { mimeType: "text/plain" } })
      const made = (own as any).artifactRef.artifactId
      yield* client.widgetArtifacts.writeChunk({ path: { ...w, artifactId: made }, payload: { offset: 0, contentBase64: bytesOf("x") } })
      yield* client.widgetArtifacts.finalize({ path: { ...w, artifactId: made } })

      const readOf = (artifactId: string) =>
        wire(client.widgetArtifacts.read({ path: { ...w, artifactId }, urlParams: {}, withResponse: true }))
      expect((yield* readOf(chosen)).status).toBe(200)
      yield* TestClock.adjust("23 hours")
      expect((yield* readOf(chosen)).status).toBe(200)
      yield* TestClock.adjust("1 hour")
      // Re-checked on every use: the person must choose it again.
      expect(yield* readOf(chosen)).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })
      expect((yield* readOf(made)).status).toBe(200)
      // The person still has it.
      expect((yield* node.request("GET", `/artifacts/${chosen}`)).status).toBe(200)
    })))

  it.scoped("removes an unfinished file 24 hours after its last write", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const w = { id, instanceId: yield* place(id) }
      const created = yield* client.widgetArtifacts.create({ path: w, payload: { mimeType: "text/plain" } })
      const artifactId = (created as any).artifactRef.artifactId
      const write = (offset: number) =>
        wire(client.widgetArtifacts.writeChunk({ path: { ...w, artifactId }, payload: { offset, contentBase64: bytesOf("ab") }, withResponse: true }))
      yield* TestClock.adjust("20 hours")
      expect((yield* write(0)).status).toBe(200)
      yield* TestClock.adjust("20 hours")
      expect((yield* write(2)).status).toBe(200)
      yield* TestClock.adjust("24 hours")
      expect(yield* write(4)).toMatchObject({ status: 404, body: { code: "ARTIFACT_NOT_FOUND" } })
      expect((yield* node.request("GET", `/artifacts/${artifactId}`)).body.code).toBe("ARTIFACT_NOT_FOUND")
      expect(fs.existsSync(path.join(artifactsDir(node.dataDir), artifactId))).toBe(false)
    })))

  it.scoped("answers malformed input in the envelope and changes nothing", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const instanceId = yield* place(id)
      const created = yield* client.widgetArtifacts.create({ path: { id, instanceId }, payload: { mimeType: "text/plain" } })
      const base = `${widgetPath(id, instanceId)}/artifacts/${(created as any).artifactRef.artifactId}`
      const bad: ReadonlyArray<readonly [string, string, unknown]> = [
        ["POST", `${widgetPath(id, instanceId)}/artifacts`, { mimeType: "not a type" }],
        ["POST", `${widgetPath(id, instanceId)}/artifacts`, { mimeType: 7 }],
        ["POST", `${base}/chunks`, { offset: -1, contentBase64: "" }],
        ["POST", `${base}/chunks`, { offset: 0, contentBase64: "***" }],
        ["POST", `${base}/chunks`, { offset: 0, contentBase64: "A".repeat(349_532) }],
        ["POST", `${base}/chunks`, { offset: 1.5, contentBase64: "" }],
        ["GET", `${base}/content?offset=-3`, undefined],
        ["GET", `${base}/content?length=262145`, undefined]
      ]
      for (const [method, url, body] of bad) {
        const response = yield* node.request(method, url, body === undefined ? {} : { body })
        expect({ url, status: response.status, code: response.body.code }).toEqual({ url, status: 400, code: "INVALID_INPUT" })
      }
      expect((yield* client.artifacts.get({ path: { artifactId: (created as any).artifactRef.artifactId } })).artifactRef.sizeBytes).toBe(0)
    })))
  // Machine-surface writes (policy, cards, the write right): MachineWrites.test.ts.
})
