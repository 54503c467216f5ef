/**
 * Conversation deletion in three steps through the real node on a real data dir: what each step answers and
 * stores, the permit (person, conversation, two minutes on the test clock, once), policy and activity checked
 * again at the last step, and what the deletion removes (rows, files on disk) and keeps (audit, notices, ledger).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import { Ledger } from "../../../services/node/Ledger.js"
import { ledgerRows, sampleEffect, withLedger } from "../../support/Ledgers.js"
import { conversation, Database, eventually, query, typedClient } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { makeDataDir, TestNode } from "../../support/NodeServer.js"

const script: ScriptInput = { rules: [{ match: "slow", steps: [{ delay: 60_000 }, { delta: "finally" }] }] }

const onNode = <A, E>(effect: Effect.Effect<A, E, TestNode>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer({ script, ...(dataDir === undefined ? {} : { dataDir }) }))

const ask = (id: string, as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", `/conversations/${id}/delete`, { body: {}, as }))

const confirm = (confirmationToken: string, decision: "granted" | "denied", as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", "/app-intents/confirm", { body: { confirmationToken, decision }, as }))

const deleteWith = (id: string, deletionPermit: string, as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", `/conversations/${id}/delete`, { body: { deletionPermit }, as }))

/** Steps 1 and 2: the permit the person's confirmation hands out. */
const permitFor = (id: string) =>
  Effect.gen(function*() {
    const asked = yield* ask(id)
    expect(asked.status).toBe(202)
    const granted = yield* confirm(asked.body.decision.confirmationToken, "granted")
    expect(granted.status).toBe(200)
    return granted.body.decision.intent.deletionPermit as string
  })

/** An artifact row and its file, written as the artifact store lays them out. */
const seedArtifact = (dataDir: string, conversationId: string, id: string, kind: string, state: string) => {
  const file = path.join(dataDir, "artifacts", id)
  fs.writeFileSync(file, `bytes of ${id}`)
  const db = new Database(path.join(dataDir, "node.db"))
  try {
    db.prepare(`INSERT INTO artifacts (id, conversation_id, instance_id, kind, mime_type, name, size_bytes, sha256, state,
      created_at, updated_at) VALUES (?, ?, NULL, ?, 'text/plain', ?, 10, NULL, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
      .run(id, conversationId, kind, `${id}.txt`, state)
  } finally {
    db.close()
  }
  return file
}

const exists = (dataDir: string, id: string) => query(dataDir, "SELECT id FROM conversations WHERE id = ?", id).length === 1

describe("conversation deletion", () => {
  it.scoped("asks, takes the person's grant, deletes once: rows and files gone; audit, notices and ledger kept", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const other = yield* conversation
      yield* Effect.orDie(client.conversations.send({ path: { id }, payload: { text: "hello" } }))
      const files = [
        seedArtifact(node.dataDir, id, "art_picked", "picked", "finalized"),
        seedArtifact(node.dataDir, id, "art_media", "media", "finalized"),
        seedArtifact(node.dataDir, id, "art_widget", "widget", "finalized"),
        seedArtifact(node.dataDir, id, "art_open", "widget", "unfinished")
      ]
      const kept = seedArtifact(node.dataDir, other, "art_other", "media", "finalized")

      const asked = yield* ask(id)
      expect(asked).toMatchObject({
        status: 202,
        body: {
          deleted: false,
          decision: {
            kind: "needs-confirmation",
            intent: { kind: "conversation.delete", conversationId: id, title: null },
            readBack: "Delete this conversation with its messages, 1 attachment, 2 files and 1 unfinished file? This cannot be undone.",
            confirmationToken: expect.stringMatching(/^dlc_/)
          }
        }
      })
      // Nothing deleted by asking; the token is stored only as its digest.
      expect(exists(node.dataDir, id)).toBe(true)
      expect(JSON.stringify(query(node.dataDir, "SELECT * FROM deletion_tokens"))).not.toContain(asked.body.decision.confirmationToken)

      const granted = yield* confirm(asked.body.decision.confirmationToken, "granted")
      expect(granted).toMatchObject({
        status: 200,
        body: {
          decision: {
            kind: "granted",
            intent: {
              kind: "conversation.delete",
              conversationId: id,
              deletionPermit: expect.stringMatching(/^dlp_/),
              expiresAt: new Date(Date.parse("1970-01-01T00:02:00.000Z")).toISOString()
            }
          }
        }
      })
      // The confirmation is answered once.
      expect((yield* confirm(asked.body.decision.confirmationToken, "granted")).body.code).toBe("RESOURCE_NOT_FOUND")
      expect(exists(node.dataDir, id)).toBe(true)

      const deleted = yield* deleteWith(id, granted.body.decision.intent.deletionPermit)
      expect(deleted).toEqual({
        status: 200,
        headers: expect.anything(),
        body: {
          deleted: true,
          conversationId: id,
          attachments: 1,
          artifacts: 2,
          pendingFiles: 1,
          readBack: "Deleted this conversation: its messages, 1 attachment, 2 files and 1 unfinished file. Saved memory and the audit log were kept."
        }
      })
      for (const file of files) expect(fs.existsSync(file)).toBe(false)
      expect(fs.existsSync(kept)).toBe(true)
      expect(exists(node.dataDir, id)).toBe(false)
      expect(query(node.dataDir, "SELECT id FROM messages WHERE conversation_id = ?", id)).toEqual([])
      expect(query(node.dataDir, "SELECT id FROM artifacts")).toEqual([{ id: "art_other" }])
      const timeline = yield* node.request("GET", `/conversations/${id}/timeline`)
      expect([timeline.status, timeline.body.code]).toEqual([404, "RESOURCE_NOT_FOUND"])
      // The audit log keeps the conversation's history and says who deleted it.
      const audit = query(node.dataDir, "SELECT kind, surface FROM audit_log WHERE conversation_id = ? ORDER BY id", id)
      expect(audit.map((row) => row.kind)).toEqual([
        "message",
        "conversation-delete.asked",
        "conversation-delete.granted",
        "conversation-deleted"
      ])
      // The same permit again: the conversation is gone.
      expect((yield* deleteWith(id, granted.body.decision.intent.deletionPermit)).status).toBe(404)
    })))

  it.scoped("refuses machine surfaces on all three steps, and a denial keeps everything", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      expect(yield* ask(id, "cli-api")).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      const asked = yield* ask(id)
      expect(yield* confirm(asked.body.decision.confirmationToken, "granted", "cli-api")).toMatchObject({
        status: 403,
        body: { code: "PERSON_ONLY" }
      })
      expect(yield* deleteWith(id, "dlp_anything", "cli-api")).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      const denied = yield* confirm(asked.body.decision.confirmationToken, "denied")
      expect(denied).toMatchObject({
        status: 200,
        body: { decision: { kind: "denied", intent: { kind: "conversation.delete", conversationId: id } } }
      })
      expect(denied.body.decision.intent.deletionPermit).toBeUndefined()
      expect((yield* confirm(asked.body.decision.confirmationToken, "granted")).status).toBe(404)
      expect(exists(node.dataDir, id)).toBe(true)
      // Unknown conversations, tokens and permits.
      expect((yield* ask("conv_missing")).body.code).toBe("RESOURCE_NOT_FOUND")
      expect((yield* confirm("dlc_never-issued", "granted")).body.code).toBe("RESOURCE_NOT_FOUND")
      expect(yield* deleteWith(id, "dlp_never-issued")).toMatchObject({
        status: 409,
        body: { code: "DELETION_PERMIT_INVALID", deleted: false, decision: { kind: "refused" }, reason: "unknown" }
      })
      // Wrongly typed bodies: 400 INVALID_INPUT, nothing changes.
      const typedWrong = yield* node.request("POST", "/app-intents/confirm", { body: { confirmationToken: 7, decision: "yes" } })
      expect([typedWrong.status, typedWrong.body.code]).toEqual([400, "INVALID_INPUT"])
      const permitWrong = yield* node.request("POST", `/conversations/${id}/delete`, { body: { deletionPermit: "" } })
      expect([permitWrong.status, permitWrong.body.code]).toEqual([400, "INVALID_INPUT"])
      expect(exists(node.dataDir, id)).toBe(true)
    })))

  it.scoped("the permit lasts two minutes on the clock, belongs to its conversation and works once", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const other = yield* conversation

      const late = yield* permitFor(id)
      yield* TestClock.adjust(Duration.minutes(2))
      expect(yield* deleteWith(id, late)).toMatchObject({
        status: 409,
        body: { code: "DELETION_PERMIT_INVALID", deleted: false, decision: { kind: "refused" }, reason: "expired" }
      })
      expect(exists(node.dataDir, id)).toBe(true)

      const permit = yield* permitFor(id)
      expect((yield* deleteWith(other, permit)).body.reason).toBe("other-conversation")
      yield* TestClock.adjust(Duration.subtract(Duration.minutes(2), Duration.millis(1)))
      // Two requests with the one permit at once: exactly one deletes.
      const both = yield* Effect.all([deleteWith(id, permit), deleteWith(id, permit)], { concurrency: 2 })
      expect(both.map((r) => r.status).sort()).toEqual([200, expect.any(Number)])
      expect(both.filter((r) => r.status === 200)).toHaveLength(1)
      expect(both.filter((r) => r.status !== 200).map((r) => r.body.code)).toEqual([
        expect.stringMatching(/^(RESOURCE_NOT_FOUND|DELETION_PERMIT_INVALID)$/)
      ])
      expect(exists(node.dataDir, id)).toBe(false)
      expect(exists(node.dataDir, other)).toBe(true)
    })))

  it.scoped("a deny rule set after the grant wins; the unspent permit works once the rule is gone", () =>
    onNode(Effect.gen(function*() {
      const node = yield* TestNode
      const client = yield* typedClient()
      const id = yield* conversation
      const permit = yield* permitFor(id)
      yield* Effect.orDie(client.preferences.setDenyRules({ payload: { value: [{ risk: "destructive" }] } }))
      expect(yield* deleteWith(id, permit)).toMatchObject({
        status: 409,
        body: {
          code: "CONVERSATION_BUSY",
          deleted: false,
          decision: { kind: "refused", say: expect.stringContaining("execution policy") }
        }
      })
      expect(exists(node.dataDir, id)).toBe(true)
      yield* Effect.orDie(client.preferences.setDenyRules({ payload: { value: [{ risk: "financial" }] } }))
      expect((yield* deleteWith(id, permit)).status).toBe(200)
    })))

  it.scoped("refused while a reply is being written, allowed once it ends", () =>
    onNode(Effect.scoped(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow please" })
      yield* eventually(
        node.request("GET", "/conversations"),
        (r) => r.body.conversations.some((c: any) => c.conversationId === id && c.running),
        "the turn runs"
      )
      const busy = yield* ask(id)
      expect(busy).toMatchObject({
        status: 409,
        body: {
          deleted: false,
          decision: { kind: "refused", say: "This conversation can't be deleted yet: a reply is still being written." }
        }
      })
      yield* TestClock.adjust(Duration.minutes(1))
      yield* stream.ended
      const permit = yield* permitFor(id)
      expect((yield* deleteWith(id, permit)).status).toBe(200)
    }))))
})

describe("deletion and unknown effects", () => {
  it.scoped("refused while an effect of the conversation is unknown (also at the last step), allowed once it settles", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const [id, permit] = yield* onNode(
        Effect.gen(function*() {
          const id = yield* conversation
          return [id, yield* permitFor(id)] as const
        }),
        dataDir
      )
      // The node stopped with its permit handed out; meanwhile a call of this conversation went unanswered.
      const effectId = yield* withLedger(dataDir, (ledger: Ledger["Type"]) =>
        Effect.flatMap(ledger.record(sampleEffect({ taskId: "task_x", conversationId: id })), (effect) =>
          Effect.as(ledger.unknown(effect.effectId, "timed-out"), effect.effectId)))
      yield* onNode(
        Effect.gen(function*() {
          const refused = yield* deleteWith(id, permit)
          expect(refused).toMatchObject({
            status: 409,
            body: {
              code: "CONVERSATION_BUSY",
              deleted: false,
              decision: { kind: "refused", say: expect.stringContaining("may or may not have happened") }
            }
          })
          expect((yield* ask(id)).status).toBe(409)
          expect(exists(dataDir, id)).toBe(true)

          const node = yield* TestNode
          const settled = yield* node.request("POST", `/effects/${effectId}/reconcile`, { body: { outcome: "failed" } })
          expect(settled.status).toBe(200)
          yield* eventually(ask(id), (r) => r.status === 202, "deletion asks once the effect settled")
          const deleted = yield* deleteWith(id, permit)
          expect(deleted.status).toBe(200)
          // The ledger keeps the effect and its answer.
          expect(ledgerRows(dataDir, `SELECT status FROM effects WHERE id = '${effectId}'`)).toEqual([{ status: "did-not-happen" }])
        }),
        dataDir
      )
    }))
})
