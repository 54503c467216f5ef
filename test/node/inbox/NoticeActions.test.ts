/**
 * The notice action route against the real node (spec, "Inbox, notices, work, effects" and "Dismissed notice"):
 * every action on a notice in each of its states, the refusals of the action table, the undo window on the test
 * clock, identical actions sent at once, and the audit of every call with its surface.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, query } from "../../support/NodeFixtures.js"
import { act, auditOf, expiredQuestion, inbox, questionTtl, script } from "./Support.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, NodeServer.layer({ script, turns: { questionTtl } }))

const actionsOf = (notice: { readonly actions: ReadonlyArray<{ readonly action: string; readonly unavailable?: string | undefined }> }) =>
  notice.actions.map((a) => (a.unavailable === undefined ? a.action : `${a.action}:${a.unavailable}`))

describe("notice actions", () => {
  it.scoped("an expired question's notice: read, unread, snooze, unsnooze, dismiss and restore, each offered only when it fits", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const { notice, questionId } = yield* expiredQuestion(id)
      expect(notice).toMatchObject({
        kind: "question-expired",
        conversationId: id,
        questionId,
        body: "Which colour?",
        ref: { kind: "notice", id: notice.noticeId },
        readAt: null,
        dismissedAt: null,
        snoozedUntil: null,
        suppressed: false
      })
      expect(actionsOf(notice)).toEqual([
        "ask-again", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"
      ])
      const n = notice.noticeId

      expect(yield* act(n, "mark-read")).toMatchObject({ status: 200, body: { noticeId: n, action: "mark-read", outcome: "done" } })
      expect((yield* act(n, "mark-read")).body.code).toBe("ACTION_NOT_OFFERED")
      let now = (yield* inbox()).notices.find((x) => x.noticeId === n)!
      expect(now.readAt).toEqual(expect.any(String))
      expect(actionsOf(now)).toContain("mark-unread")
      expect((yield* act(n, "mark-unread")).status).toBe(200)
      expect((yield* inbox()).notices.find((x) => x.noticeId === n)!.readAt).toBeNull()

      // Snooze: `until` needed, ahead, at most 30 days.
      const clock = yield* TestClock.currentTimeMillis
      const at = (ms: number) => new Date(clock + ms).toISOString()
      expect(yield* act(n, "snooze", {})).toMatchObject({ status: 400, body: { code: "INVALID_INPUT", field: "until", reason: "missing" } })
      expect((yield* act(n, "snooze", { until: at(-1000) })).body).toMatchObject({ code: "INVALID_INPUT", reason: "past" })
      expect((yield* act(n, "snooze", { until: at(Duration.toMillis(Duration.days(30)) + 1000) })).body)
        .toMatchObject({ code: "INVALID_INPUT", reason: "too-far" })
      expect((yield* act(n, "snooze", { until: "tomorrow" })).body).toMatchObject({ code: "INVALID_INPUT" })
      const until = at(Duration.toMillis(Duration.days(30)))
      expect(yield* act(n, "snooze", { until })).toMatchObject({ status: 200, body: { action: "snooze", snoozedUntil: until } })
      now = (yield* inbox()).notices.find((x) => x.noticeId === n)!
      expect(now.snoozedUntil).toBe(until)
      expect(actionsOf(now)).toContain("unsnooze")
      expect((yield* act(n, "snooze", { until })).body.code).toBe("ACTION_NOT_OFFERED")
      expect((yield* act(n, "unsnooze")).status).toBe(200)
      expect((yield* act(n, "unsnooze")).body.code).toBe("ACTION_NOT_OFFERED")

      // Dismiss, then restore within five minutes (the fifth included); a dismissed notice offers only restore.
      expect((yield* act(n, "restore")).body.code).toBe("ACTION_NOT_OFFERED")
      expect((yield* act(n, "dismiss")).status).toBe(200)
      expect((yield* inbox()).notices.map((x) => x.noticeId)).not.toContain(n)
      expect((yield* act(n, "mark-read")).body.code).toBe("ACTION_NOT_OFFERED")
      expect((yield* act(n, "dismiss")).body.code).toBe("ACTION_NOT_OFFERED")
      yield* TestClock.adjust(Duration.minutes(5))
      expect(yield* act(n, "restore")).toMatchObject({ status: 200, body: { action: "restore", outcome: "done" } })
      expect((yield* inbox()).notices.map((x) => x.noticeId)).toContain(n)
      expect((yield* act(n, "dismiss")).status).toBe(200)
      yield* TestClock.adjust(Duration.sum(Duration.minutes(5), Duration.millis(1)))
      const late = yield* act(n, "restore")
      expect(late).toMatchObject({ status: 409, body: { code: "UNDO_EXPIRED", dismissedAt: expect.any(String) } })
      expect(query(node.dataDir, "SELECT state FROM notices WHERE id = ?", n)).toEqual([{ state: "dismissed" }])
    })))

  it.scoped("ask-again re-asks the question once, with its new id; the second press is 409 ALREADY_ASKED_AGAIN", () =>
    withNode(Effect.gen(function*() {
      const id = yield* conversation
      const { notice, questionId } = yield* expiredQuestion(id)
      const asked = yield* act(notice.noticeId, "ask-again")
      expect(asked).toMatchObject({
        status: 200,
        body: { noticeId: notice.noticeId, action: "ask-again", outcome: "done", questionId: expect.any(String) }
      })
      expect(asked.body.questionId).not.toBe(questionId)
      expect((yield* act(notice.noticeId, "ask-again")).body.code).toBe("ALREADY_ASKED_AGAIN")
    })))

  it.scoped("refusals of the table: unknown and percent-encoded names, surface actions, own-route and person-only, missing notices, actions not offered", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const { notice } = yield* expiredQuestion(id)
      const n = notice.noticeId
      const before = query(node.dataDir, "SELECT * FROM notices WHERE id = ?", n)

      for (const name of ["%64ismiss", "dismis%73", "DISMISS", "bogus", "dismiss%20", "mark%2Dread", "dismiss%2F", "%E2%80%8Bdismiss"]) {
        expect(yield* act(n, name)).toMatchObject({ status: 400, body: { code: "UNKNOWN_ACTION" } })
      }
      for (const name of ["open", "ask-clark", "add-to-context", "review-update", "copy-details"]) {
        expect(yield* act(n, name)).toMatchObject({ status: 409, body: { code: "SURFACE_ACTION", action: name } })
      }
      for (const name of ["reconcile-confirmed", "reconcile-failed"]) {
        expect(yield* act(n, name)).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      }
      expect(yield* act(n, "update", {}, "cli-api")).toMatchObject({ status: 403, body: { code: "PERSON_ONLY", surface: "cli-api" } })
      expect(yield* act(n, "update")).toMatchObject({ status: 409, body: { code: "ACTION_NOT_OFFERED", action: "update" } })
      for (const name of ["retry", "skip-version", "suppress", "unsuppress", "unsnooze", "mark-unread", "restore"]) {
        expect(yield* act(n, name)).toMatchObject({ status: 409, body: { code: "ACTION_NOT_OFFERED" } })
      }
      expect(yield* act("ntc_missing", "dismiss")).toMatchObject({ status: 404, body: { code: "RESOURCE_NOT_FOUND" } })
      expect(yield* act(n, "dismiss", "not json")).toMatchObject({ status: 400 })
      expect(yield* act(n, "snooze", { until: 5 })).toMatchObject({ status: 400, body: { code: "INVALID_INPUT" } })
      expect(yield* node.request("POST", `/inbox/notices/${n}/actions/dismiss`, { as: "none" })).toMatchObject({ status: 401 })
      // Nothing changed by any refusal.
      expect(query(node.dataDir, "SELECT * FROM notices WHERE id = ?", n)).toEqual(before)

      // Machine surfaces may take every other action.
      expect((yield* act(n, "mark-read", {}, "cli-api")).status).toBe(200)
      // Each call is audited with its surface, refusals with their reason.
      const audit = auditOf(node.dataDir)
      expect(audit).toContainEqual({ surface: "person", noticeId: n, action: "%64ismiss", outcome: "UnknownNoticeAction" })
      expect(audit).toContainEqual({ surface: "cli-api", noticeId: n, action: "update", outcome: "PersonOnlyRefused" })
      expect(audit.at(-1)).toEqual({ surface: "cli-api", noticeId: n, action: "mark-read", outcome: "done" })
    })))

  it.scoped("identical actions sent at once: one takes effect, the others are refused as the rules say", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const id = yield* conversation
      const { notice } = yield* expiredQuestion(id)
      const n = notice.noticeId
      const dismissals = yield* Effect.all(Array.from({ length: 12 }, () => act(n, "dismiss")), { concurrency: "unbounded" })
      expect(dismissals.filter((r) => r.status === 200)).toHaveLength(1)
      expect(dismissals.filter((r) => r.status === 409 && r.body.code === "ACTION_NOT_OFFERED")).toHaveLength(11)
      expect((yield* act(n, "restore")).status).toBe(200)

      const asks = yield* Effect.all(Array.from({ length: 8 }, () => act(n, "ask-again")), { concurrency: "unbounded" })
      expect(asks.filter((r) => r.status === 200)).toHaveLength(1)
      expect(asks.filter((r) => r.body.code === "ALREADY_ASKED_AGAIN")).toHaveLength(7)
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM questions WHERE conversation_id = ?", id)).toEqual([{ n: 2 }])
    })))
})
