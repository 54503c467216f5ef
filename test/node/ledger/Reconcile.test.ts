/**
 * POST /effects/{effectId}/reconcile over real HTTP against a real node whose ledger file was seeded (through
 * the ledger layer itself, on the same data dir) before the node started: the answer, once; what is refused
 * and that a refusal stores nothing; the audit entry with its surface; 50 concurrent answers.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Ledger } from "../../../services/node/Ledger.js"
import { ledgerRows, sampleEffect, withLedger } from "../../support/Ledgers.js"
import { query, typedClient, wire } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { makeDataDir, TestNode } from "../../support/NodeServer.js"

/** Unknown effects in the ledger of `dataDir`, one per task id, before any node runs there. */
const seedUnknown = (dataDir: string, taskIds: ReadonlyArray<string>) =>
  withLedger(dataDir, (ledger: Ledger["Type"]) =>
    Effect.forEach(taskIds, (taskId) =>
      Effect.flatMap(ledger.record(sampleEffect({ taskId, conversationId: `conv_${taskId}` })), (effect) =>
        Effect.as(ledger.unknown(effect.effectId, "timed-out"), effect.effectId))))

const reconcile = (effectId: string, body: unknown, as: NodeServer.As = "person") =>
  Effect.flatMap(TestNode, (node) => node.request("POST", `/effects/${encodeURIComponent(effectId)}/reconcile`, { body, as }))

const statusOf = (dataDir: string, effectId: string) =>
  ledgerRows(dataDir, `SELECT status, reconciled_at FROM effects WHERE id = '${effectId}'`)[0]

const onNode = <A, E>(dataDir: string, effect: Effect.Effect<A, E, TestNode>) =>
  Effect.provide(effect, NodeServer.layer({ dataDir }))

describe("POST /effects/{effectId}/reconcile", () => {
  it.scoped("records the person's answer once, settles the task, audits it; a second answer is 409", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const [confirmed, failed] = yield* seedUnknown(dataDir, ["task_a", "task_b"])
      yield* onNode(dataDir, Effect.gen(function*() {
        const client = yield* typedClient("person")
        const answered = yield* wire(client.work.reconcile({
          path: { effectId: confirmed! },
          payload: { outcome: "confirmed", source: "click" },
          withResponse: true
        }))
        expect(answered).toEqual({
          status: 200,
          body: {
            effectId: confirmed,
            outcome: "confirmed",
            source: "click",
            reconciledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
            reconciledBy: "person",
            taskId: "task_a",
            // The run never checked its result.
            taskStatus: "settled-unchecked"
          }
        })
        // Spoken in the app: the channel is audited, the source stays what the client sent.
        const spoken = yield* reconcile(failed!, { outcome: "failed", source: "voice" }, "voice")
        expect([spoken.status, spoken.body.outcome, spoken.body.source, spoken.body.taskStatus]).toEqual([
          200,
          "failed",
          "voice",
          "failed"
        ])

        const again = yield* reconcile(confirmed!, { outcome: "failed" })
        expect(again).toMatchObject({
          status: 409,
          body: { code: "EFFECT_NOT_UNKNOWN", message: expect.any(String), status: "confirmed" }
        })
        const node = yield* TestNode
        expect(query(node.dataDir, "SELECT kind, surface, channel, conversation_id, detail FROM audit_log WHERE kind = 'effect-reconciled' ORDER BY id")
          .map((row) => ({ ...row, detail: JSON.parse(row.detail) }))).toEqual([
            {
              kind: "effect-reconciled",
              surface: "person",
              channel: "text",
              conversation_id: "conv_task_a",
              detail: { effectId: confirmed, taskId: "task_a", outcome: "confirmed", source: "click", taskStatus: "settled-unchecked" }
            },
            {
              kind: "effect-reconciled",
              surface: "person",
              channel: "voice",
              conversation_id: "conv_task_b",
              detail: { effectId: failed, taskId: "task_b", outcome: "failed", source: "voice", taskStatus: "failed" }
            }
          ])
      }))
      // The answer survives the node: after a restart it is still the one recorded.
      yield* onNode(dataDir, Effect.gen(function*() {
        expect((yield* reconcile(confirmed!, { outcome: "confirmed" })).body).toMatchObject({
          code: "EFFECT_NOT_UNKNOWN",
          status: "confirmed"
        })
      }))
      expect(ledgerRows(dataDir, "SELECT status, reconciled_source, task_status FROM effects ORDER BY task_id")).toEqual([
        { status: "confirmed", reconciled_source: "click", task_status: "settled-unchecked" },
        { status: "did-not-happen", reconciled_source: "voice", task_status: "failed" }
      ])
    }))

  it.scoped("404 for a missing effect or another node's; 400 for a body that is not an answer; 403 to a machine", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const [effectId] = yield* seedUnknown(dataDir, ["task_a"])
      const [elsewhere] = yield* seedUnknown(makeDataDir(), ["task_other"])
      yield* onNode(dataDir, Effect.gen(function*() {
        for (const id of ["eff_missing", elsewhere!]) {
          expect(yield* reconcile(id, { outcome: "confirmed" })).toMatchObject({
            status: 404,
            body: { code: "RESOURCE_NOT_FOUND", message: expect.any(String) }
          })
        }
        for (const body of [{ outcome: "maybe" }, {}, { outcome: "confirmed", source: "telepathy" }, ["confirmed"]]) {
          const refused = yield* reconcile(effectId!, body)
          expect([refused.status, refused.body.code]).toEqual([400, "INVALID_INPUT"])
        }
        const node = yield* TestNode
        const garbled = yield* Effect.promise(() =>
          fetch(`${node.baseUrl}/effects/${effectId}/reconcile`, {
            method: "POST",
            headers: { ...node.headers("person"), "content-type": "application/json" },
            body: "{\"outcome\": "
          }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))
        )
        expect([garbled.status, garbled.body.code]).toEqual([400, "INVALID_INPUT"])
        // The token alone is a machine surface (the command-line api).
        expect(yield* reconcile(effectId!, { outcome: "confirmed" }, "cli-api")).toMatchObject({
          status: 403,
          body: { code: "PERSON_ONLY", surface: "cli-api" }
        })
        expect((yield* reconcile(effectId!, { outcome: "confirmed" }, "none")).status).toBe(401)
        // Nothing of it was stored.
        expect(statusOf(dataDir, effectId!)).toEqual({ status: "unknown", reconciled_at: null })
        expect(query(node.dataDir, "SELECT count(*) AS n FROM audit_log WHERE kind = 'effect-reconciled'")).toEqual([{ n: 0 }])
      }))
    }))

  it.scoped("50 concurrent answers to one effect: exactly one 200, 49 409 EFFECT_NOT_UNKNOWN", () =>
    Effect.gen(function*() {
      const dataDir = makeDataDir()
      const [effectId] = yield* seedUnknown(dataDir, ["task_race"])
      yield* onNode(dataDir, Effect.gen(function*() {
        const answers = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) =>
            reconcile(effectId!, { outcome: i % 2 === 0 ? "confirmed" : "failed", source: "click" })),
          { concurrency: "unbounded" }
        )
        const statuses = answers.map((answer) => answer.status).sort()
        expect(statuses).toEqual([200, ...Array(49).fill(409)])
        expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === "EFFECT_NOT_UNKNOWN")).toBe(true)
        const winner = answers.find((answer) => answer.status === 200)!.body
        const node = yield* TestNode
        expect(query(node.dataDir, "SELECT count(*) AS n FROM audit_log WHERE kind = 'effect-reconciled'")).toEqual([{ n: 1 }])
        expect(ledgerRows(dataDir, `SELECT reconciled_outcome FROM effects WHERE id = '${effectId}'`)).toEqual([
          { reconciled_outcome: winner.outcome }
        ])
      }))
    }))
})
