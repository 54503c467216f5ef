/** Helpers of the inbox tests: the node's inbox as the person reads it, notice actions over raw paths. */
import { Duration, Effect, TestClock } from "effect"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import { type As, TestNode } from "../../support/NodeServer.js"
import { Database, query, send, timeline, typedClient } from "../../support/NodeFixtures.js"

export const questionTtl = Duration.minutes(10)

export const script: ScriptInput = {
  rules: [
    { match: "break", steps: [{ error: "the model broke" }] },
    { match: "slow", steps: [{ delay: 600_000 }, { delta: "done slowly" }] },
    { match: "colour", steps: [{ question: { question: "Which colour?", options: [{ id: "r", label: "Red" }] } }] }
  ]
}

/** GET /inbox through the typed client. */
export const inbox = (as: As = "person") =>
  Effect.flatMap(typedClient(as), (client) => Effect.orDie(client.inbox.inbox({ urlParams: {} })))

/** A notice action over raw fetch: the action goes into the path exactly as given. */
export const act = (noticeId: string, action: string, body: unknown = {}, as: As = "person") =>
  Effect.flatMap(TestNode, (node) =>
    node.request("POST", `/inbox/notices/${encodeURIComponent(noticeId)}/actions/${action}`, { body, as }))

/** Asks a question and lets it expire; answers the notice the expiry wrote. */
export const expiredQuestion = (id: string) =>
  Effect.gen(function*() {
    const response = yield* send(id, { text: "pick a colour" })
    const questionId = response.body.timeline.entries
      .flatMap((e: any) => e.blocks.filter((b: any) => b.type === "question"))[0].questionId as string
    for (let i = 0; i < 20; i++) {
      yield* TestClock.adjust(questionTtl)
      const blocks = (yield* timeline(id)).flatMap((e: any) => e.blocks)
      if (blocks.some((b: any) => b.type === "question" && b.questionId === questionId && b.status === "expired")) break
    }
    const notice = (yield* inbox()).notices.find((n) => n.questionId === questionId)
    if (notice === undefined) return yield* Effect.dieMessage("no notice for the expired question")
    return { questionId, notice }
  })

/** Writes a notice row straight into the node's database, as another part of the node would. */
export const writeNotice = (
  dataDir: string,
  notice: { id: string; kind: string; data: Record<string, unknown>; source?: string; conversationId?: string; createdAt?: string }
) => {
  const db = new Database(`${dataDir}/node.db`)
  try {
    db.prepare(`INSERT INTO notices (id, kind, conversation_id, subject_id, data, state, created_at, source)
      VALUES (?, ?, ?, ?, ?, 'unread', ?, ?)`).run(
      notice.id,
      notice.kind,
      notice.conversationId ?? null,
      `${String(notice.data.name)}@${String(notice.data.version)}`,
      JSON.stringify(notice.data),
      notice.createdAt ?? new Date(0).toISOString(),
      notice.source ?? null
    )
  } finally {
    db.close()
  }
}

export const auditOf = (dataDir: string) =>
  query(dataDir, "SELECT surface, detail FROM audit_log WHERE kind = 'notice-action' ORDER BY id")
    .map((row) => ({ surface: row.surface, ...JSON.parse(row.detail) }))
