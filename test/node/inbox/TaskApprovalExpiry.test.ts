/**
 * Expired task approvals in the inbox, on the real node and the test clock (issue 16, point 1): a risky step of a
 * command-line turn waits as a task approval; an hour without a decision expires it by the node's clock and
 * writes a notice offering Ask again; ask-again asks the same operation anew once (a second press is refused),
 * and the new approval is granted like any other. A package installed since with other bytes makes ask-again
 * unavailable (package-gone).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, query, send } from "../../support/NodeFixtures.js"
import { install, probeCopy, probeTool, setPreference } from "../tools/Fixtures.js"
import { act, auditOf, inbox } from "./Support.js"

const script: ScriptInput = {
  rules: [
    { match: "^write probe", steps: [probeTool("write_value", { key: "colour", value: "blue" })], after: [{ delta: "Written." }] }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer({ script, ...(dataDir === undefined ? {} : { dataDir }) }))

const actionsOf = (notice: { readonly actions: ReadonlyArray<{ readonly action: string; readonly unavailable?: string | undefined }> }) =>
  notice.actions.map((a) => (a.unavailable === undefined ? a.action : `${a.action}:${a.unavailable}`))

/** A command-line turn whose risky step waits for the person; answers the conversation, task and approval. */
const asked = Effect.gen(function*() {
  const folder = probeCopy({ write_value: "external-write" })
  yield* install(folder)
  expect((yield* setPreference("execution.machineTurns", "ask")).status).toBe(200)
  const id = yield* conversation
  const response = yield* send(id, { text: "write probe" }, "cli-api")
  const waiting = (yield* inbox()).waiting.filter((w) => w.kind === "task-approval")
  expect(waiting).toHaveLength(1)
  const approval = waiting[0] as Extract<(typeof waiting)[number], { kind: "task-approval" }>
  expect(approval).toMatchObject({ taskId: response.body.taskId, conversationId: id, origin: "cli-api" })
  return { folder, id, approval }
})

const approvalRows = (dataDir: string) =>
  query(dataDir, "SELECT id, status, task_id, operation_digest FROM task_approvals ORDER BY requested_at, id")

describe("expired task approvals in the inbox", () => {
  it.scoped("an hour without a decision: expired by the node's clock, a notice offers Ask again, once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { approval, id } = yield* asked
      yield* TestClock.adjust(Duration.minutes(59))
      expect((yield* inbox()).notices.filter((n) => n.kind === "task-approval-expired")).toEqual([])

      yield* TestClock.adjust(Duration.minutes(1))
      const page = yield* inbox()
      // Expired without anyone deciding it late: no longer waiting, the notice says so.
      expect(page.waiting).toEqual([])
      expect(approvalRows(node.dataDir)).toEqual([
        { id: approval.approvalId, status: "expired", task_id: approval.taskId, operation_digest: approval.operationDigest }
      ])
      const notice = page.notices.find((n) => n.kind === "task-approval-expired")!
      expect(notice).toMatchObject({
        noticeId: `ntc_${approval.approvalId}`,
        title: "An approval expired",
        body: "probe-service · write_value was not run.",
        conversationId: id,
        taskId: approval.taskId,
        readAt: null,
        dismissedAt: null
      })
      expect(actionsOf(notice)).toEqual([
        "ask-again", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"
      ])
      // A decision now is too late, and writes no second notice.
      const late = yield* node.request("POST", `/tasks/${approval.taskId}/approvals/${approval.approvalId}/decide`, {
        body: { decision: "granted", digest: approval.operationDigest }
      })
      expect(late).toMatchObject({ status: 409, body: { code: "APPROVAL_EXPIRED" } })
      expect(query(node.dataDir, "SELECT count(*) AS n FROM notices WHERE kind = 'task-approval-expired'")).toEqual([{ n: 1 }])

      // Ask again: the same operation, a new approval with a new hour; the notice no longer offers it.
      const again = yield* act(notice.noticeId, "ask-again")
      expect(again).toMatchObject({
        status: 200,
        body: { noticeId: notice.noticeId, action: "ask-again", outcome: "done", taskId: approval.taskId }
      })
      const newId = again.body.approvalId as string
      expect(newId).toMatch(/^tap_/)
      expect(newId).not.toBe(approval.approvalId)
      const after = yield* inbox()
      expect(after.waiting).toMatchObject([
        { kind: "task-approval", approvalId: newId, taskId: approval.taskId, operationDigest: approval.operationDigest }
      ])
      expect(actionsOf(after.notices.find((n) => n.noticeId === notice.noticeId)!)).toEqual([
        "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"
      ])
      expect(yield* act(notice.noticeId, "ask-again")).toMatchObject({ status: 409, body: { code: "ACTION_NOT_OFFERED" } })
      expect(approvalRows(node.dataDir).map((r) => [r.id, r.status])).toEqual([
        [approval.approvalId, "expired"],
        [newId, "asked"]
      ])

      // The new approval is decided like any other.
      const granted = yield* node.request("POST", `/tasks/${approval.taskId}/approvals/${newId}/decide`, {
        body: { decision: "granted", digest: approval.operationDigest }
      })
      expect(granted).toMatchObject({ status: 200, body: { approvalId: newId, decision: "granted" } })
      // Granted, or already spent by the task the grant continued.
      expect(["granted", "used"]).toContain(approvalRows(node.dataDir)[1]!.status)
      expect(auditOf(node.dataDir).map((a) => [a.action, a.outcome])).toEqual([
        ["ask-again", "done"],
        ["ask-again", "ActionNotOffered"]
      ])
    })))

  it.scoped("identical ask-again presses at once ask once; a package reinstalled with other bytes is package-gone", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { approval, folder } = yield* asked
      yield* TestClock.adjust(Duration.hours(1))
      const noticeId = `ntc_${approval.approvalId}`
      const presses = yield* Effect.all(Array.from({ length: 8 }, () => act(noticeId, "ask-again")), { concurrency: "unbounded" })
      expect(presses.filter((p) => p.status === 200)).toHaveLength(1)
      expect(presses.filter((p) => p.status === 409 && p.body.code === "ACTION_NOT_OFFERED")).toHaveLength(7)
      expect(approvalRows(node.dataDir).filter((r) => r.status === "asked")).toHaveLength(1)

      // The second approval expires too; meanwhile the package is installed again with other bytes.
      yield* TestClock.adjust(Duration.hours(1))
      const second = approvalRows(node.dataDir).find((r) => r.id !== approval.approvalId)!
      expect(second.status).toBe("expired")
      fs.writeFileSync(path.join(folder, "NOTES.md"), "other bytes\n")
      yield* install(folder)
      const notice = (yield* inbox()).notices.find((n) => n.noticeId === `ntc_${second.id}`)!
      expect(actionsOf(notice)[0]).toBe("ask-again:package-gone")
      expect(yield* act(notice.noticeId, "ask-again")).toMatchObject({
        status: 409,
        body: { code: "ACTION_UNAVAILABLE", action: "ask-again", unavailable: "package-gone" }
      })
      expect(approvalRows(node.dataDir).filter((r) => r.status === "asked")).toEqual([])
    })))

  it.scoped("an approval that fell due while the node was down expires at the next start, with its notice", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const { approval } = yield* withNode(asked, dataDir)
      yield* TestClock.adjust(Duration.hours(2))
      yield* withNode(
        Effect.gen(function*() {
          const page = yield* eventually(inbox(), (p) => p.notices.some((n) => n.kind === "task-approval-expired"), "the notice")
          expect(page.waiting).toEqual([])
          expect(page.notices.find((n) => n.kind === "task-approval-expired")).toMatchObject({
            noticeId: `ntc_${approval.approvalId}`,
            taskId: approval.taskId
          })
          expect(approvalRows(dataDir).map((r) => r.status)).toEqual(["expired"])
        }),
        dataDir
      )
    }))
})
