/**
 * Machine-surface widget file writes through the real node on the test clock (spec, "Machine-surface widget file
 * writes"): the execution policy, one approval card per file decided by the person's task-approval route, the
 * 429 past 8 waiting cards, the 15-minute write right and the audit without bytes. The command-line api is
 * reached over HTTP; MCP and the relay have no endpoint on the node yet, so their callers (with their
 * connections) go through the same MachineFileWrites service the routes use.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import type { Caller } from "../../../schema/node/Security.js"
import { ArtifactStore } from "../../../services/node/ArtifactStore.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { type Clearance, MachineFileWrites, type WriteRequest } from "../../../services/node/MachineFileWrites.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"
import { conversation, query, typedClient, wire } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { askFirst, audited, b64, card, cli, decide, filesOf, person, service, widget, withNode } from "./MachineWritesSupport.js"

describe("machine-surface widget file writes", () => {
  it.scoped("the default policy runs them, each audited with its surface and without bytes", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      const created = yield* cli("POST", w.files, { mimeType: "text/plain", name: "notes.txt" })
      expect(created.status).toBe(201)
      const file = `${w.files}/${created.body.artifactRef.artifactId}`
      const secret = "the quick brown fox jumps"
      expect((yield* cli("POST", `${file}/chunks`, { offset: 0, contentBase64: b64(secret) })).status).toBe(200)
      expect((yield* cli("POST", `${file}/finalize`)).status).toBe(200)
      expect((yield* cli("POST", `${file}/attach`, {})).status).toBe(201)
      const other = yield* cli("POST", w.files, { mimeType: "text/plain" })
      expect((yield* cli("DELETE", `${w.files}/${other.body.artifactRef.artifactId}`)).status).toBe(200)

      const rows = (yield* Effect.flatMap(service(AuditLog), (log) => log.list())).filter((r) => r.kind.startsWith("artifact."))
      expect(rows.map((r) => [r.kind, r.surface])).toEqual([
        ["artifact.created", "cli-api"],
        ["artifact.chunk-written", "cli-api"],
        ["artifact.finalized", "cli-api"],
        ["artifact.attached", "cli-api"],
        ["artifact.created", "cli-api"],
        ["artifact.discarded", "cli-api"]
      ])
      expect(rows[1]!.detail).toMatchObject({ artifactId: created.body.artifactRef.artifactId, offset: 0, lengthBytes: secret.length })
      const text = JSON.stringify(rows)
      expect(text).not.toContain(b64(secret))
      expect(text).not.toContain("quick brown")
      // Who started the file is stored; the person's chunks stay unaudited (a row covers a file).
      const node = yield* TestNode
      expect(query(node.dataDir, "SELECT asker FROM artifact_starters WHERE artifact_id = ?", created.body.artifactRef.artifactId))
        .toEqual([{ asker: "cli-api" }])
      const own = yield* person("POST", w.files, { mimeType: "text/plain" })
      expect((yield* person("POST", `${w.files}/${own.body.artifactRef.artifactId}/chunks`, { offset: 0, contentBase64: b64("x") })).status)
        .toBe(200)
      expect(yield* audited("artifact.chunk-written")).toHaveLength(1)
    })))

  it.scoped("deny rules refuse with 403 POLICY_REFUSED and write nothing; only a discard of another's or a finished file is destructive", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      expect((yield* person("PUT", "/preferences/execution.denyRules", { value: [{ risk: "destructive", origins: ["cli-api"] }] })).status)
        .toBe(200)
      // The asker's own unfinished file: a local write, not refused.
      const mine = (yield* cli("POST", w.files, { mimeType: "text/plain" })).body.artifactRef.artifactId
      expect((yield* cli("DELETE", `${w.files}/${mine}`)).status).toBe(200)
      // A file the app started, and a finished one: destructive, refused, kept.
      const apps = (yield* person("POST", w.files, { mimeType: "text/plain" })).body.artifactRef.artifactId
      const done = (yield* cli("POST", w.files, { mimeType: "text/plain" })).body.artifactRef.artifactId
      yield* cli("POST", `${w.files}/${done}/chunks`, { offset: 0, contentBase64: b64("ok") })
      expect((yield* cli("POST", `${w.files}/${done}/finalize`)).status).toBe(200)
      for (const artifactId of [apps, done]) {
        const refused = yield* cli("DELETE", `${w.files}/${artifactId}`)
        expect([refused.status, refused.body.code, refused.body.reason]).toEqual([403, "POLICY_REFUSED", "deny-rule"])
      }
      expect((yield* filesOf(id)).map((f: any) => f.id).sort()).toEqual([apps, done].sort())

      expect((yield* person("PUT", "/preferences/execution.denyRules", { value: [{ package: "@clark/notes" }] })).status).toBe(200)
      const denied = yield* cli("POST", w.files, { mimeType: "text/plain" })
      expect([denied.status, denied.body.code, denied.body.reason]).toEqual([403, "POLICY_REFUSED", "deny-rule"])
      const chunk = yield* cli("POST", `${w.files}/${apps}/chunks`, { offset: 0, contentBase64: b64("no") })
      expect([chunk.status, chunk.body.code]).toEqual([403, "POLICY_REFUSED"])
      expect((yield* filesOf(id)).find((f: any) => f.id === apps)).toMatchObject({ size: 0 })
      expect(yield* filesOf(id)).toHaveLength(2)
      expect((yield* audited("artifact.write-refused")).map((r) => [r.surface, r.detail?.operation, r.detail?.reason])).toEqual([
        ["cli-api", "discard", "deny-rule"],
        ["cli-api", "discard", "deny-rule"],
        ["cli-api", "create", "deny-rule"],
        ["cli-api", "write", "deny-rule"]
      ])
      // The person's own writes never go through it.
      expect((yield* person("POST", w.files, { mimeType: "text/plain" })).status).toBe(201)
    })))

  it.scoped("asking: one card per file shown in the inbox, the same card on asking again, and the approved create's write right", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      yield* askFirst
      const asked = yield* cli("POST", w.files, { mimeType: "text/plain", name: "notes.txt" })
      expect(asked.status).toBe(202)
      expect(asked.body).toEqual({ outcome: "approval-required", approvalRequired: { approvalId: expect.any(String) } })
      const approvalId = asked.body.approvalRequired.approvalId
      expect(yield* filesOf(id)).toEqual([])
      // The contract's 202: the typed client of the command-line api reads the same card.
      const typed = yield* typedClient("cli-api")
      const again = yield* wire(typed.widgetArtifacts.create({
        path: { id, instanceId: w.instanceId },
        payload: { mimeType: "text/plain", name: "notes.txt" },
        withResponse: true
      }))
      expect(again).toEqual({ status: 202, body: { outcome: "approval-required", approvalRequired: { approvalId } } })

      const shown = yield* card(approvalId)
      expect(shown).toMatchObject({ taskId: w.instanceId, conversationId: id, origin: "cli-api", tool: "artifacts.create", risk: "local-write" })
      expect(shown.input).toEqual({
        kind: "widget-file-write",
        version: 1,
        operation: "create",
        instanceId: w.instanceId,
        artifactId: null,
        mimeType: "text/plain",
        name: "notes.txt",
        asker: "cli-api"
      })
      const inbox = yield* person("GET", "/inbox")
      expect(inbox.body.waiting).toEqual([expect.objectContaining({
        kind: "task-approval",
        approvalId,
        taskId: w.instanceId,
        conversationId: id,
        origin: "cli-api",
        summary: "@clark/notes · artifacts.create"
      })])
      // Deciding is the person's.
      expect((yield* cli("POST", `/tasks/${w.instanceId}/approvals/${approvalId}/decide`, { decision: "granted", digest: shown.operationDigest })).status)
        .toBe(403)
      const decided = yield* decide(approvalId)
      expect([decided.status, decided.body]).toEqual([200, { taskId: w.instanceId, approvalId, decision: "granted", redispatched: false }])

      // Any client of the command-line api: this request is another connection than the one that asked.
      const created = yield* cli("POST", w.files, { mimeType: "text/plain", name: "notes.txt" })
      expect(created.status).toBe(201)
      expect((yield* card(approvalId)).status).toBe("used")
      const file = `${w.files}/${created.body.artifactRef.artifactId}`
      // A card covers a file, never a chunk: the right runs every chunk and the finalize.
      expect((yield* cli("POST", `${file}/chunks`, { offset: 0, contentBase64: b64("one ") })).status).toBe(200)
      expect((yield* cli("POST", `${file}/chunks`, { offset: 4, contentBase64: b64("two") })).status).toBe(200)
      expect((yield* cli("POST", `${file}/finalize`)).body.artifactRef).toMatchObject({ sizeBytes: 7 })
      // Finalized: a chunk is refused by the file, not asked about.
      const late = yield* cli("POST", `${file}/chunks`, { offset: 7, contentBase64: b64("x") })
      expect([late.status, late.body.reason]).toEqual([400, "finalized"])
      // Approving one create approved nothing else.
      const another = yield* cli("POST", w.files, { mimeType: "text/plain", name: "notes.txt" })
      expect(another.status).toBe(202)
      expect(another.body.approvalRequired.approvalId).not.toBe(approvalId)
      // Attach asks with its own card for that file; after approval it runs once.
      const attach = yield* cli("POST", `${file}/attach`, { name: "n.txt" })
      expect(attach.status).toBe(202)
      expect((yield* card(attach.body.approvalRequired.approvalId)).input).toMatchObject({ operation: "attach", artifactId: created.body.artifactRef.artifactId })
      yield* decide(attach.body.approvalRequired.approvalId)
      expect((yield* cli("POST", `${file}/attach`, { name: "n.txt" })).status).toBe(201)
      expect((yield* audited("artifact.write-approval-asked")).map((r) => r.detail?.operation)).toEqual(["create", "create", "attach"])
    })))

  it.scoped("the write right lasts 15 minutes; write access to a working file and a discard of another's file ask", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      yield* askFirst
      yield* decide((yield* cli("POST", w.files, { mimeType: "text/plain" })).body.approvalRequired.approvalId)
      const artifactId = (yield* cli("POST", w.files, { mimeType: "text/plain" })).body.artifactRef.artifactId
      const file = `${w.files}/${artifactId}`
      expect((yield* cli("POST", `${file}/chunks`, { offset: 0, contentBase64: b64("a") })).status).toBe(200)
      yield* TestClock.adjust("14 minutes")
      expect((yield* cli("POST", `${file}/chunks`, { offset: 1, contentBase64: b64("b") })).status).toBe(200)
      yield* TestClock.adjust("1 minute")
      const access = yield* cli("POST", `${file}/chunks`, { offset: 2, contentBase64: b64("c") })
      expect(access.status).toBe(202)
      const accessId = access.body.approvalRequired.approvalId
      expect(yield* card(accessId)).toMatchObject({ tool: "artifacts.write", input: { operation: "write", artifactId } })
      // Another chunk, or the finalize, of that file: the same card.
      expect((yield* cli("POST", `${file}/chunks`, { offset: 2, contentBase64: b64("other") })).body.approvalRequired.approvalId).toBe(accessId)
      expect((yield* cli("POST", `${file}/finalize`)).body.approvalRequired.approvalId).toBe(accessId)
      expect((yield* filesOf(id))[0]).toMatchObject({ size: 2, state: "unfinished" })
      // Approved: the right runs from the decision, and the card is spent.
      yield* decide(accessId)
      expect((yield* card(accessId)).status).toBe("used")
      expect((yield* cli("POST", `${file}/chunks`, { offset: 2, contentBase64: b64("c") })).status).toBe(200)
      yield* TestClock.adjust("15 minutes")
      expect((yield* cli("POST", `${file}/finalize`)).status).toBe(202)

      // The app's working file: write access asks, then runs; discarding it is destructive.
      const apps = (yield* person("POST", w.files, { mimeType: "text/plain" })).body.artifactRef.artifactId
      const write = yield* cli("POST", `${w.files}/${apps}/chunks`, { offset: 0, contentBase64: b64("hi") })
      yield* decide(write.body.approvalRequired.approvalId)
      expect((yield* cli("POST", `${w.files}/${apps}/chunks`, { offset: 0, contentBase64: b64("hi") })).status).toBe(200)
      const discard = yield* cli("DELETE", `${w.files}/${apps}`)
      expect(discard.status).toBe(202)
      expect(yield* card(discard.body.approvalRequired.approvalId)).toMatchObject({ risk: "destructive", input: { operation: "discard" } })
      expect((yield* filesOf(id)).map((f: any) => f.id)).toContain(apps)

      // The asker's own unfinished file, under its right: discarding it runs and ends the right.
      yield* decide((yield* cli("POST", w.files, { mimeType: "text/csv" })).body.approvalRequired.approvalId)
      const own = (yield* cli("POST", w.files, { mimeType: "text/csv" })).body.artifactRef.artifactId
      expect((yield* cli("DELETE", `${w.files}/${own}`)).status).toBe(200)
      expect((yield* filesOf(id)).map((f: any) => f.id)).not.toContain(own)
    })))

  it.scoped("more than 8 waiting cards from one surface in one conversation: 429 APPROVALS_PENDING, counted in memory", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const nine = (w: { readonly files: string }, n: number) => cli("POST", w.files, { mimeType: "text/plain", name: `n${n}.txt` })
      const first = yield* withNode(
        Effect.gen(function*() {
          const id = yield* conversation
          const w = yield* widget(id)
          yield* askFirst
          const ids: Array<string> = []
          for (let n = 1; n <= 8; n++) {
            const asked = yield* nine(w, n)
            expect(asked.status).toBe(202)
            ids.push(asked.body.approvalRequired.approvalId)
          }
          expect(new Set(ids).size).toBe(8)
          const ninth = yield* nine(w, 9)
          expect([ninth.status, ninth.body.code]).toEqual([429, "APPROVALS_PENDING"])
          // Declared by the contract: the typed client decodes it as the route's refusal.
          const typed = yield* typedClient("cli-api")
          const refused = yield* wire(typed.widgetArtifacts.create({
            path: { id, instanceId: w.instanceId },
            payload: { mimeType: "text/plain", name: "n9.txt" },
            withResponse: true
          }))
          expect([refused.status, refused.body.code]).toEqual([429, "APPROVALS_PENDING"])
          const waiting = (yield* Effect.flatMap(service(TaskApprovals), (a) => a.waiting)).filter((a) => a.conversationId === id)
          expect(waiting).toHaveLength(8)
          expect((yield* audited("artifact.write-refused")).map((r) => r.detail?.reason)).toEqual(["approvals-pending", "approvals-pending"])
          // Asking again for one of the eight is not a new card.
          expect((yield* nine(w, 3)).body.approvalRequired.approvalId).toBe(ids[2])
          // Counted per conversation, and per surface.
          const elsewhere = yield* widget(yield* conversation)
          expect((yield* nine(elsewhere, 9)).status).toBe(202)
          const writes = yield* service(MachineFileWrites)
          const mcp: Caller = { surface: "mcp", channel: "text" }
          const viaMcp = yield* writes.clear(mcp, {
            owner: { conversationId: id, instanceId: w.instanceId, packageId: "@clark/notes" },
            packageDigest: "sha256:0",
            operation: "create",
            artifactId: null,
            mimeType: "text/plain",
            name: "n9.txt"
          })
          expect(viaMcp._tag).toBe("Ask")
          // A decided card stops counting.
          yield* decide(ids[0]!, "denied")
          expect((yield* nine(w, 9)).status).toBe(202)
          expect((yield* nine(w, 10)).status).toBe(429)
          return { id, w, ids }
        }),
        dataDir
      )
      // A restart resets the count; the cards themselves still wait.
      yield* withNode(
        Effect.gen(function*() {
          expect((yield* nine(first.w, 10)).status).toBe(202)
          expect((yield* nine(first.w, 2)).body.approvalRequired.approvalId).toBe(first.ids[1])
          // Expired cards (one hour) stop counting too.
          for (let n = 11; n <= 17; n++) expect((yield* nine(first.w, n)).status).toBe(202)
          expect((yield* nine(first.w, 18)).status).toBe(429)
          yield* TestClock.adjust("1 hour")
          expect((yield* nine(first.w, 18)).status).toBe(202)
        }),
        dataDir
      )
    }))

  it.scoped("identical asks at once make one card; a denied card writes nothing and the next ask is a new card", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      yield* askFirst
      const both = yield* Effect.all(
        [cli("POST", w.files, { mimeType: "image/png" }), cli("POST", w.files, { mimeType: "image/png" })],
        { concurrency: 2 }
      )
      expect(both.map((r) => r.status)).toEqual([202, 202])
      const approvalId = both[0].body.approvalRequired.approvalId
      expect(both[1].body.approvalRequired.approvalId).toBe(approvalId)
      const waiting = (yield* Effect.flatMap(service(TaskApprovals), (a) => a.waiting)).filter((a) => a.conversationId === id)
      expect(waiting.map((a) => a.approvalId)).toEqual([approvalId])
      const denied = yield* decide(approvalId, "denied")
      expect([denied.status, denied.body.redispatched]).toEqual([200, false])
      const next = yield* cli("POST", w.files, { mimeType: "image/png" })
      expect(next.status).toBe(202)
      expect(next.body.approvalRequired.approvalId).not.toBe(approvalId)
      expect(yield* filesOf(id)).toEqual([])
      // Deciding it again is refused as for any task approval.
      expect((yield* decide(approvalId, "granted")).body.code).toBe("APPROVAL_ALREADY_DECIDED")
    })))

  it.scoped("over the relay only the asking connection holds the write right; over MCP any client does", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const w = yield* widget(id)
      yield* askFirst
      const writes = yield* service(MachineFileWrites)
      const store = yield* service(ArtifactStore)
      const owner = { conversationId: id, instanceId: w.instanceId, packageId: "@clark/notes" }
      const request = (operation: WriteRequest["operation"], artifactId: string | null): WriteRequest => ({
        owner,
        packageDigest: "sha256:0",
        operation,
        artifactId,
        mimeType: operation === "create" ? "text/plain" : undefined,
        name: operation === "create" ? "r.txt" : undefined
      })
      const as = (surface: "relay" | "mcp", connection: string): Caller => ({ surface, channel: "text", connection })
      const askId = (clearance: Clearance) => {
        if (clearance._tag !== "Ask") throw new Error("the policy did not ask")
        return clearance.approvalId
      }
      /** As the create route does: clear, begin, record the starter and the right. */
      const create = (caller: Caller) =>
        Effect.gen(function*() {
          const clearance = yield* writes.clear(caller, request("create", null))
          if (clearance._tag !== "Run") return yield* Effect.dieMessage("create was not cleared")
          const file = yield* store.begin(owner, { mimeType: "text/plain", name: "r.txt" })
          yield* writes.created(caller, file.artifactId, clearance.granted)
          return file.artifactId
        })

      const relayA = as("relay", "ws-1")
      const relayB = as("relay", "ws-2")
      const fromA = askId(yield* writes.clear(relayA, request("create", null)))
      const fromB = askId(yield* writes.clear(relayB, request("create", null)))
      expect(fromB).not.toBe(fromA)
      expect((yield* decide(fromA)).status).toBe(200)
      // The grant is the asking connection's: the other one still waits on its own card.
      expect((yield* writes.clear(relayB, request("create", null)))).toEqual({ _tag: "Ask", approvalId: fromB })
      const relayFile = yield* create(relayA)
      expect(yield* writes.clear(relayA, request("write", relayFile))).toEqual({ _tag: "Run", granted: false })
      const otherConnection = yield* writes.clear(relayB, request("write", relayFile))
      expect(otherConnection._tag).toBe("Ask")
      // Its own unfinished file: a local write for the connection that started it, destructive for the other.
      expect(yield* card(askId(yield* writes.clear(relayB, request("discard", relayFile))))).toMatchObject({ risk: "destructive", origin: "relay" })
      expect(yield* writes.clear(relayA, request("discard", relayFile))).toEqual({ _tag: "Run", granted: false })

      const mcpOne = as("mcp", "m-1")
      const mcpTwo = as("mcp", "m-2")
      yield* decide(askId(yield* writes.clear(mcpOne, request("create", null))))
      // Any client of MCP spends the grant and holds the right.
      const mcpFile = yield* create(mcpTwo)
      expect(yield* writes.clear(mcpOne, request("write", mcpFile))).toEqual({ _tag: "Run", granted: false })
      expect(yield* writes.clear(mcpTwo, request("write", mcpFile))).toEqual({ _tag: "Run", granted: false })
      // Not the command-line api's, nor the relay's.
      expect((yield* cli("POST", `${w.files}/${mcpFile}/chunks`, { offset: 0, contentBase64: b64("x") })).status).toBe(202)
      expect((yield* writes.clear(relayA, request("write", mcpFile)))._tag).toBe("Ask")
      // A finalize or a discard ends the right.
      yield* writes.ended(mcpFile)
      expect((yield* writes.clear(mcpOne, request("write", mcpFile)))._tag).toBe("Ask")
      expect((yield* audited("artifact.write-approval-asked")).filter((r) => r.surface === "relay").map((r) => r.detail?.connection))
        .toEqual(["ws-1", "ws-2", "ws-2", "ws-2", "ws-1"])
    })))
})
