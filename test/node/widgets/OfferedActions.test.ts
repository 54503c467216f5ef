/**
 * Offered actions (actions.perform@1) on the real node: a scripted turn asks the probe's placed widget to perform
 * `highlight` through `perform_widget_action`; the test plays the app, reading the handed-over request and
 * reporting what the widget did. Every rule: not offered, 1,200 / 1,201 characters, deny rules, the approval card
 * (the same card twice, the 9th card), approval from the inbox or another page (approved, not performed, nothing
 * sent), approval from the widget's page (performed), refuse vs error (an unknown effect, never retried).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, hasEvent, query, typedClient } from "../../support/NodeFixtures.js"
import { setPreference } from "../tools/Fixtures.js"
import { install, ledgerRows, place, probeId } from "./Fixtures.js"
import {
  askMode,
  decide,
  offerScript,
  perform,
  performAnswered,
  report,
  setup,
  taskOf,
  tideWidget,
  waitingRequests,
  withNode
} from "./OfferedFixtures.js"

describe("offered actions performed by a widget", () => {
  it.scoped("done: the request is handed to the app, recorded in the ledger first, and the result reaches the model as data", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      const { output, reported, request } = yield* performAnswered(id, instanceId, { instanceId, action: "highlight", input: { row: 3 } }, {
        outcome: "done",
        result: { highlighted: 3 }
      })
      expect(request).toMatchObject({ instanceId, action: "highlight", input: { row: 3 }, status: "requested" })
      expect(reported).toMatchObject({ status: 200, body: { requestId: request.requestId, status: "done", effectId: expect.stringMatching(/^eff_/) } })
      expect(output).toEqual({ requestId: request.requestId, instanceId, action: "highlight", outcome: "done", result: { highlighted: 3 } })
      const effects = ledgerRows(node.dataDir)
      expect(effects).toHaveLength(1)
      expect(effects[0]).toMatchObject({ status: "answered", risk: "local-write", tool: "probe-panel.highlight", package_id: probeId })
      expect((yield* waitingRequests(id, instanceId)).requests).toEqual([])
      // The first answer stands.
      const again = yield* report(id, instanceId, request.requestId, { outcome: "error" })
      expect(again).toMatchObject({ status: 409, body: { code: "OFFERED_ACTION_ANSWERED", status: "done" } })
      const elsewhere = yield* report(id, "wid_none", request.requestId, { outcome: "done" })
      expect(elsewhere).toMatchObject({ status: 404, body: { code: "INSTANCE_UNKNOWN" } })
    })))

  it.scoped("the example tide widget performs its offered show-day; its buttons are not offered actions", () =>
    withNode(Effect.gen(function*() {
      yield* install(tideWidget())
      const id = yield* conversation
      const placed = yield* place(id, "place tide")
      expect(placed).toMatchObject({ widgetId: "tide-table", offeredActions: ["show-day"] })
      const instanceId = placed.instanceId as string
      expect(yield* perform(id, { instanceId, action: "refresh", input: {} })).toMatchObject({
        error: "ACTION_NOT_OFFERED",
        offered: ["show-day"]
      })
      const { output } = yield* performAnswered(id, instanceId, { instanceId, action: "show-day", input: { day: "2026-11-28" } }, {
        outcome: "done",
        result: { day: "2026-11-28" }
      })
      expect(output).toMatchObject({ action: "show-day", outcome: "done", result: { day: "2026-11-28" } })
    })))

  it.scoped("refuse(code, why) is a refusal before any change; any other error is an unknown effect the inbox asks about, never retried", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      const refused = yield* performAnswered(id, instanceId, { instanceId, action: "highlight", input: { row: 99 } }, {
        outcome: "refused",
        code: "NO_SUCH_ROW",
        why: "There is no row 99."
      })
      expect(refused.output).toMatchObject({ outcome: "refused", code: "NO_SUCH_ROW", why: "There is no row 99." })
      expect(ledgerRows(node.dataDir)[0]).toMatchObject({ status: "answered" })
      const failed = yield* performAnswered(id, instanceId, { instanceId, action: "highlight", input: { row: 4 } }, { outcome: "error" })
      expect(failed.output).toMatchObject({ outcome: "unknown-effect", mayHaveRun: true, effectId: expect.stringMatching(/^eff_/) })
      const effect = ledgerRows(node.dataDir).find((e) => e.id === failed.output.effectId)
      expect(effect).toMatchObject({ status: "unknown", reason: "tool-failed" })
      const inbox = yield* Effect.flatMap(typedClient(), (client) => Effect.orDie(client.inbox.inbox({ urlParams: {} })))
      expect(inbox.waiting).toContainEqual(expect.objectContaining({ kind: "unknown-effect", effectId: failed.output.effectId }))
      // Never retried: nothing else was handed over, and the two requests are the only ones.
      expect((yield* waitingRequests(id, instanceId)).requests).toEqual([])
      expect(query(node.dataDir, "SELECT status FROM offered_actions ORDER BY requested_at").map((r) => r.status)).toEqual(["refused", "unknown"])
      // A refusal names its code.
      const bare = yield* Effect.fork(perform(id, { instanceId, action: "highlight", input: { row: 5 } }))
      const [request] = (yield* eventually(waitingRequests(id, instanceId), (r) => r.requests.length === 1, "the third request")).requests
      expect(yield* report(id, instanceId, request!.requestId, { outcome: "refused" })).toMatchObject({
        status: 400,
        body: { code: "INVALID_INPUT", field: "code" }
      })
      yield* report(id, instanceId, request!.requestId, { outcome: "done" })
      yield* Fiber.join(bare)
    })))

  it.scoped("refused before anything is sent: an action not offered, a widget not here, 1,201 characters, a deny rule", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      expect(yield* perform(id, { instanceId, action: "delete-everything", input: {} })).toMatchObject({ error: "ACTION_NOT_OFFERED" })
      expect(yield* perform(id, { instanceId: "wid_elsewhere", action: "highlight" })).toMatchObject({ error: "INSTANCE_UNKNOWN" })
      // 1,201 characters of JSON: a string of 1,199 characters and its two quotes.
      expect(yield* perform(id, { instanceId, action: "highlight", input: "x".repeat(1199) })).toMatchObject({
        error: "INVALID_INPUT",
        reason: "input-too-long",
        limit: 1200
      })
      expect((yield* setPreference("execution.denyRules", [{ package: probeId, tool: "probe-panel.highlight" }])).status).toBe(200)
      expect(yield* perform(id, { instanceId, action: "highlight", input: {} })).toMatchObject({ error: "POLICY_REFUSED" })
      expect(ledgerRows(node.dataDir)).toEqual([])
      expect(query(node.dataDir, "SELECT id FROM offered_actions")).toEqual([])
      // A rule on local writes refuses it too: performing is a local write.
      yield* setPreference("execution.denyRules", [{ risk: "local-write" }])
      expect(yield* perform(id, { instanceId, action: "highlight", input: {} })).toMatchObject({ error: "POLICY_REFUSED" })
    })))
})

describe("the approval card of an offered action", () => {
  it.scoped("1,200 characters are asked about with the whole input on the card; the same request returns the same card", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      yield* askMode
      const input = "x".repeat(1198)
      const first = yield* perform(id, { instanceId, action: "highlight", input }, "cli-api")
      expect(first).toMatchObject({
        error: "APPROVAL_REQUIRED",
        approvalId: expect.stringMatching(/^tap_/),
        sameCard: false,
        card: { instanceId, action: "highlight", input, operationDigest: expect.stringMatching(/^sha256:/) }
      })
      const second = yield* perform(id, { instanceId, action: "highlight", input }, "cli-api")
      expect(second).toMatchObject({ error: "APPROVAL_REQUIRED", approvalId: first.approvalId, sameCard: true })
      const inbox = yield* Effect.flatMap(typedClient(), (client) => Effect.orDie(client.inbox.inbox({ urlParams: {} })))
      const cards = inbox.waiting.filter((w: any) => w.kind === "task-approval")
      expect(cards).toEqual([expect.objectContaining({ approvalId: first.approvalId, input, origin: "cli-api", operationDigest: first.card.operationDigest })])
      expect(ledgerRows(node.dataDir)).toEqual([])
      // The person's own turn is not asked: it would hand the action over (answered here as the app).
      const own = yield* performAnswered(id, instanceId, { instanceId, action: "highlight", input: "own" }, { outcome: "done" })
      expect(own.output).toMatchObject({ outcome: "done" })
    })))

  it.scoped("at most 8 waiting cards per conversation: the 9th is refused 429 APPROVALS_PENDING, an identical one still gets its card", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      yield* askMode
      const cards: Array<string> = []
      for (let i = 1; i <= 8; i++) {
        const asked = yield* perform(id, { instanceId, action: "highlight", input: { row: i } }, "cli-api")
        expect(asked).toMatchObject({ error: "APPROVAL_REQUIRED", sameCard: false })
        cards.push(asked.approvalId)
      }
      expect(new Set(cards).size).toBe(8)
      const ninth = yield* perform(id, { instanceId, action: "highlight", input: { row: 9 } }, "cli-api")
      expect(ninth).toMatchObject({ error: "APPROVALS_PENDING", limit: 8 })
      expect(query(node.dataDir, "SELECT COUNT(*) AS n FROM task_approvals")[0].n).toBe(8)
      const repeat = yield* perform(id, { instanceId, action: "highlight", input: { row: 3 } }, "cli-api")
      expect(repeat).toMatchObject({ error: "APPROVAL_REQUIRED", approvalId: cards[2], sameCard: true })
      // Deciding one frees a place.
      const digest = query(node.dataDir, "SELECT operation_digest FROM task_approvals WHERE id = ?", cards[0])[0].operation_digest
      expect((yield* decide(taskOf(node.dataDir, cards[0]!), cards[0]!, { decision: "denied", digest })).body).toMatchObject({
        decision: "denied",
        performed: false
      })
      expect(yield* perform(id, { instanceId, action: "highlight", input: { row: 9 } }, "cli-api")).toMatchObject({ error: "APPROVAL_REQUIRED" })
      // An expired card no longer waits: an hour on, the place it held is free again.
      yield* TestClock.adjust(Duration.hours(1))
      const later = yield* perform(id, { instanceId, action: "highlight", input: { row: 10 } }, "cli-api")
      expect(later).toMatchObject({ error: "APPROVAL_REQUIRED", sameCard: false })
      // Another conversation has its own eight.
      const other = yield* conversation
      const placedThere = yield* place(other)
      expect(yield* perform(other, { instanceId: placedThere.instanceId, action: "highlight", input: { row: 1 } }, "cli-api")).toMatchObject({
        error: "APPROVAL_REQUIRED"
      })
    })))

  it.scoped("approved from the inbox or a page without the widget: approved, not performed, nothing sent; from the widget's page: performed", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      yield* askMode
      const ask = (row: number) => perform(id, { instanceId, action: "highlight", input: { row } }, "cli-api")
      const grant = (card: any, extra: Record<string, unknown> = {}) =>
        decide(taskOf(node.dataDir, card.approvalId), card.approvalId, { decision: "granted", digest: card.card.operationDigest, ...extra })

      const fromInbox = yield* ask(1)
      const inboxGrant = yield* grant(fromInbox)
      expect(inboxGrant).toMatchObject({ status: 200, body: { decision: "granted", redispatched: false, performed: false, requestId: expect.any(String) } })
      const otherPage = yield* ask(2)
      const otherGrant = yield* grant(otherPage, { shownInstanceIds: ["wid_another"] })
      expect(otherGrant.body).toMatchObject({ performed: false })
      expect((yield* waitingRequests(id, instanceId)).requests).toEqual([])
      expect(ledgerRows(node.dataDir)).toEqual([])
      expect(query(node.dataDir, "SELECT status FROM offered_actions ORDER BY requested_at").map((r) => r.status)).toEqual([
        "approved-not-performed",
        "approved-not-performed"
      ])
      // The grant is spent: deciding again is refused, and nothing is sent.
      expect((yield* grant(fromInbox)).body).toMatchObject({ code: "APPROVAL_ALREADY_DECIDED" })

      const onPage = yield* ask(3)
      const pageGrant = yield* grant(onPage, { shownInstanceIds: [instanceId] })
      expect(pageGrant.body).toMatchObject({ performed: true })
      const [request] = (yield* waitingRequests(id, instanceId)).requests
      expect(request).toMatchObject({ requestId: pageGrant.body.requestId, action: "highlight", input: { row: 3 } })
      expect(ledgerRows(node.dataDir)).toEqual([expect.objectContaining({ status: "sent", origin: "cli-api" })])
      // While the widget has not answered, the action is settling: the conversation cannot be deleted.
      const busy = yield* node.request("POST", `/conversations/${id}/delete`, { body: {} })
      expect(busy).toMatchObject({ status: 409, body: { deleted: false, decision: { kind: "refused" } } })
      const done = yield* report(id, instanceId, request!.requestId, { outcome: "done", result: "row 3" })
      expect(done.body).toMatchObject({ status: "done" })
      expect(ledgerRows(node.dataDir)[0]).toMatchObject({ status: "answered" })
      const asks = yield* node.request("POST", `/conversations/${id}/delete`, { body: {} })
      expect(asks).toMatchObject({ status: 202, body: { deleted: false, decision: { kind: "needs-confirmation" } } })
    })))
})

describe("the hand-over on the turn's stream, the wait and a restart", () => {
  it.scoped("the stream carries widget-action-requested; no answer within the wait leaves an unknown effect, and a late answer is refused", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, instanceId } = yield* setup
      const body = { instanceId, action: "highlight", input: { row: 7 } }
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: `perform ${JSON.stringify(body)}` })
      const seen = yield* stream.until(hasEvent("widget-action-requested"))
      const requested = seen.find((e) => e.event === "widget-action-requested")!.data
      expect(requested).toEqual({ requestId: expect.stringMatching(/^ofr_/), instanceId, action: "highlight", input: { row: 7 } })
      expect(ledgerRows(node.dataDir)).toEqual([expect.objectContaining({ status: "sent" })])
      // Just under the wait (30 s by default) the turn still waits for the app.
      yield* TestClock.adjust(Duration.millis(29_999))
      yield* waitingRequests(id, instanceId)
      expect(stream.events.some((e) => e.event === "tool-end")).toBe(false)
      for (let i = 0; i < 20 && !hasEvent("done")(stream.events); i++) {
        yield* TestClock.adjust(Duration.seconds(30))
        yield* waitingRequests(id, instanceId)
      }
      const events = yield* stream.ended
      const end = events.find((e) => e.event === "tool-end")!.data
      expect(end).toMatchObject({
        name: "perform_widget_action",
        status: "failed",
        output: { requestId: requested.requestId, outcome: "unknown-effect", mayHaveRun: true }
      })
      expect(ledgerRows(node.dataDir)[0]).toMatchObject({ status: "unknown", reason: "timed-out" })
      expect((yield* waitingRequests(id, instanceId)).requests).toEqual([])
      const late = yield* report(id, instanceId, requested.requestId, { outcome: "done" })
      expect(late).toMatchObject({ status: 409, body: { code: "OFFERED_ACTION_ANSWERED", status: "unknown" } })
      expect(ledgerRows(node.dataDir)[0]).toMatchObject({ status: "unknown" })
    })))

  it.scoped("a request handed over when the node stops is not performed after the restart: its effect is unknown", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const before = yield* Effect.gen(function*() {
        const node = yield* TestNode
        const { id, instanceId } = yield* setup
        yield* askMode
        const card = yield* perform(id, { instanceId, action: "highlight", input: { row: 1 } }, "cli-api")
        const granted = yield* decide(taskOf(node.dataDir, card.approvalId), card.approvalId, {
          decision: "granted",
          digest: card.card.operationDigest,
          shownInstanceIds: [instanceId]
        })
        expect(granted.body).toMatchObject({ performed: true })
        expect((yield* waitingRequests(id, instanceId)).requests).toHaveLength(1)
        return { id, instanceId, requestId: granted.body.requestId as string }
      }).pipe(Effect.provide(NodeServer.layer({ script: offerScript, dataDir })), Effect.scoped)
      yield* Effect.gen(function*() {
        expect((yield* waitingRequests(before.id, before.instanceId)).requests).toEqual([])
        expect(query(dataDir, "SELECT status, code FROM offered_actions")).toEqual([{ status: "unknown", code: "ACTION_INTERRUPTED" }])
        expect(ledgerRows(dataDir)).toEqual([expect.objectContaining({ status: "unknown", reason: "interrupted-by-restart" })])
        const late = yield* report(before.id, before.instanceId, before.requestId, { outcome: "done" })
        expect(late.body).toMatchObject({ code: "OFFERED_ACTION_ANSWERED", status: "unknown" })
      }).pipe(Effect.provide(NodeServer.layer({ script: offerScript, dataDir })))
    }), { timeout: 60_000 })
})
