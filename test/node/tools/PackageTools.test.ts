/**
 * Package tools inside turns, on the real node with the scripted model and the probe service package installed
 * from a local folder: its tools offered and run over MCP in their own process, the events and the timeline, the
 * ledger written before a call with an effect is sent, unknown effects with their notice, input checks, deny
 * rules, and task approvals for risky steps of turns from other programs.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ScriptInput } from "../../../layers/node/model/Scripted.js"
import { ledgerFile } from "../../../layers/node/ledger/LedgerDatabase.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { makeReadOnly } from "../../support/Ledgers.js"
import { conversation, eventually, query, send, timeline, typedClient, wire } from "../../support/NodeFixtures.js"
import { install, ledgerRows, probeCopy, probeId, probeTool, setPreference } from "./Fixtures.js"

const tool = probeTool

const script: ScriptInput = {
  rules: [
    { match: "^read probe", steps: [tool("read_value", { key: "colour" })], after: [{ delta: "Read." }] },
    { match: "^write probe", steps: [tool("write_value", { key: "colour", value: "blue" })], after: [{ delta: "Written." }] },
    { match: "^crash probe", steps: [tool("crash", {})], after: [{ delta: "Should not be read." }] },
    { match: "^bad input", steps: [tool("write_value", { key: "colour" })], after: [{ delta: "Refused." }] },
    { match: "^slow probe", steps: [tool("slow", { millis: 30_000 })], after: [{ delta: "Slow done." }] },
    { match: "^slow write", steps: [tool("slow", { millis: 30_000 })], after: [{ delta: "Slow done." }] },
    // The node's continuation after a grant: the model takes the approved step again.
    { match: "approved the step", steps: [tool("write_value", { key: "colour", value: "blue" })], after: [{ delta: "Done now." }] }
  ]
}

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, NodeServer.layer({ script }))

/** The reply's tool block of a waiting-route answer. */
const toolBlock = (body: any) => {
  const reply = body.timeline.entries.find((entry: any) => entry.role === "assistant")
  return reply.blocks.find((block: any) => block.type === "tool")
}

const auditKinds = (dataDir: string, kind: string) =>
  query(dataDir, "SELECT surface, channel, detail FROM audit_log WHERE kind = ? ORDER BY id", kind).map((row) => ({
    ...row,
    detail: JSON.parse(row.detail)
  }))

describe("package tools in a turn", () => {
  it.scoped("offers an installed service's tools and runs a read call over MCP, shown as tool-start and tool-end", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "read probe" })
      const events = yield* stream.ended
      const start = events.find((e) => e.event === "tool-start")!.data
      const end = events.find((e) => e.event === "tool-end")!.data
      expect(start).toMatchObject({ name: "probe-service__read_value", input: { key: "colour" }, packageId: probeId, risk: "read" })
      expect(end).toMatchObject({
        toolCallId: start.toolCallId,
        name: "probe-service__read_value",
        status: "done",
        packageId: probeId,
        risk: "read",
        summary: "probe-service · read_value: done"
      })
      expect(end.effectId).toBeUndefined()
      expect(events.filter((e) => e.event === "delta").map((e) => e.data.text).join("")).toBe("Read.")
      // A read changes nothing outside: no effect is written.
      expect(ledgerRows(node.dataDir)).toEqual([])
      const [call] = auditKinds(node.dataDir, "tool-call")
      expect(call).toMatchObject({ surface: "person", channel: "text", detail: { tool: "read_value", status: "done" } })
    })))

  it.scoped("writes a call with an effect to the ledger before sending it, and records its answer", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const id = yield* conversation
      const { body, status } = yield* send(id, { text: "write probe" }, "cli-api")
      expect(status).toBe(200)
      const block = toolBlock(body)
      expect(block).toMatchObject({ status: "done", packageId: probeId, risk: "local-write" })
      const [effect] = ledgerRows(node.dataDir)
      expect(effect).toMatchObject({
        id: block.effectId,
        task_id: body.taskId,
        conversation_id: id,
        package_id: probeId,
        tool: "write_value",
        origin: "cli-api",
        status: "answered"
      })
      expect(JSON.parse(effect.input)).toEqual({ key: "colour", value: "blue" })
      // The value reached the service: a read of it in the next turn answers it.
      const read = yield* send(id, { text: "read probe" })
      expect(toolBlock(read.body).output).toEqual({ text: "blue", structuredContent: { found: true } })
    })))

  it.scoped("makes a call whose process dies an unknown effect with a notice, ends the turn, and lets the person reconcile it once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const id = yield* conversation
      const { body } = yield* send(id, { text: "crash probe" })
      const block = toolBlock(body)
      expect(block).toMatchObject({ status: "failed", outcome: "unknown-effect", code: "SERVICE_TOOL_FAILED" })
      expect(block.output).toMatchObject({ error: "SERVICE_TOOL_FAILED", mayHaveRun: true, effectId: block.effectId })
      // The task waits as uncertain: the model is not asked to go on after the call.
      const reply = body.timeline.entries.find((entry: any) => entry.role === "assistant")
      expect(JSON.stringify(reply!.blocks)).not.toContain("Should not be read.")
      const [effect] = ledgerRows(node.dataDir)
      expect(effect).toMatchObject({ id: block.effectId, status: "unknown", may_have_run: 1, reason: "tool-failed" })
      const notices = query(node.dataDir, "SELECT kind, subject_id FROM notices WHERE kind = 'unknown-effect'")
      expect(notices).toEqual([{ kind: "unknown-effect", subject_id: block.effectId }])

      const person = yield* typedClient("person")
      const reconcile = (outcome: "confirmed" | "failed") =>
        Effect.orDie(wire(person.work.reconcile({
          path: { effectId: block.effectId },
          payload: { outcome, source: "click" },
          withResponse: true
        })))
      const first = yield* reconcile("failed")
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ effectId: block.effectId, outcome: "failed", source: "click", reconciledBy: "person", taskId: body.taskId })
      const again = yield* reconcile("confirmed")
      expect(again).toMatchObject({ status: 409, body: { code: "EFFECT_NOT_UNKNOWN" } })
    })))

  it.scoped("refuses an input that does not fit the tool's schema before anything is written or sent", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const id = yield* conversation
      const { body } = yield* send(id, { text: "bad input" })
      const block = toolBlock(body)
      expect(block).toMatchObject({ status: "failed", outcome: "not-sent", code: "INVALID_INPUT" })
      expect(block.output.problem).toContain("value")
      expect(ledgerRows(node.dataDir)).toEqual([])
    })))

  it.scoped("answers LEDGER_UNAVAILABLE and sends nothing when the ledger file cannot be written", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const id = yield* Effect.provide(
        Effect.zipRight(install(probeCopy()), conversation),
        NodeServer.layer({ script, dataDir })
      )
      const restore = makeReadOnly(ledgerFile(dataDir))
      yield* Effect.addFinalizer(() => Effect.sync(restore))
      yield* Effect.provide(
        Effect.gen(function*() {
          const { body } = yield* send(id, { text: "write probe" })
          expect(toolBlock(body)).toMatchObject({ status: "failed", outcome: "not-sent", code: "LEDGER_UNAVAILABLE" })
          // Nothing reached the service: the value was never written.
          const read = yield* send(id, { text: "read probe" })
          expect(toolBlock(read.body).output).toMatchObject({ text: "", structuredContent: { found: false } })
        }),
        NodeServer.layer({ script, dataDir })
      )
    }))

  it.scoped("stops a running call and the package's service on emergency stop", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow probe" })
      yield* stream.until((events) => events.some((e) => e.event === "tool-start"))
      const cli = yield* typedClient("cli-api")
      const stop = yield* Effect.orDie(cli.conversations.emergencyStop())
      expect(stop.stopped).toMatchObject({ turns: 1, commands: 1 })
      const events = yield* stream.ended
      expect(events.at(-1)!.event).toBe("done")
      expect(events.at(-1)!.data.resolution).toBe("stopped")
    })))
})

describe("a call cut off", () => {
  it.scoped("by a stop is cancelled over MCP, shown as SERVICE_CANCELLED, and a call with an effect becomes unknown", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy({ slow: "local-write" }))
      const id = yield* conversation
      const stream = yield* node.stream(`/conversations/${id}/messages/stream`, { text: "slow write" })
      // Stopped once the call went out: the service started and the effect is written.
      yield* eventually(Effect.sync(() => ledgerRows(node.dataDir).length), (n) => n === 1, "the effect written")
      const stopped = yield* node.request("POST", `/conversations/${id}/stop`, { body: {} })
      expect(stopped).toMatchObject({ status: 200, body: { stopped: true } })
      const events = yield* stream.ended
      const end = events.find((e) => e.event === "tool-end")!.data
      expect(end).toMatchObject({ name: "probe-service__slow", status: "failed", code: "SERVICE_CANCELLED" })
      expect(events.at(-1)).toMatchObject({ event: "done", data: { resolution: "stopped" } })
      const [effect] = ledgerRows(node.dataDir)
      expect(effect).toMatchObject({ tool: "slow", status: "unknown", reason: "cancelled", may_have_run: 1 })
      expect(query(node.dataDir, "SELECT subject_id FROM notices WHERE kind = 'unknown-effect'")).toEqual([{ subject_id: effect.id }])
      const entries = yield* timeline(id)
      const block = entries.at(-1).blocks.find((b: any) => b.type === "tool")
      expect(block).toMatchObject({ status: "failed", code: "SERVICE_CANCELLED" })
    })))
})

describe("the execution policy", () => {
  it.scoped("refuses a step a deny rule matches, whatever the origin, and only the person sets the rules", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy())
      const set = yield* setPreference("execution.denyRules", [{ package: probeId, tool: "write_value" }])
      expect(set.status).toBe(200)
      const id = yield* conversation
      const { body } = yield* send(id, { text: "write probe" })
      expect(toolBlock(body)).toMatchObject({ status: "failed", outcome: "denied", code: "POLICY_REFUSED" })
      expect(ledgerRows(node.dataDir)).toEqual([])
      // Machine surfaces cannot lift it.
      expect((yield* setPreference("execution.denyRules", [], "cli-api"))).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      expect((yield* setPreference("execution.denyRules", [{}]))).toMatchObject({ status: 400, body: { code: "PREFERENCE_INVALID" } })
    })))

  it.scoped("asks before a risky step of a cli-api turn, runs it after a grant from a host-written continuation, once", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      yield* install(probeCopy({ write_value: "external-write" }))
      expect((yield* setPreference("execution.machineTurns", "ask")).status).toBe(200)
      const id = yield* conversation
      // The person's own turn follows the default: it runs.
      const own = yield* send(id, { text: "write probe" })
      expect(toolBlock(own.body)).toMatchObject({ status: "done" })
      expect(ledgerRows(node.dataDir)).toHaveLength(1)

      const asked = yield* send(id, { text: "write probe" }, "cli-api")
      const block = toolBlock(asked.body)
      expect(block).toMatchObject({ status: "failed", outcome: "approval-required", code: "APPROVAL_REQUIRED" })
      expect(ledgerRows(node.dataDir)).toHaveLength(1)
      const [card] = query(node.dataDir, "SELECT * FROM task_approvals WHERE id = ?", block.approvalId)
      expect(card).toMatchObject({ task_id: asked.body.taskId, origin: "cli-api", tool: "write_value", status: "asked" })
      expect(JSON.parse(card.input)).toEqual({ key: "colour", value: "blue" })

      // Clients made once: making one reads the whole contract, and 50 of them at once would hold the requests back.
      const person = yield* typedClient("person")
      const cli = yield* typedClient("cli-api")
      const decide = (digest: string, as: "person" | "cli-api" = "person") =>
        Effect.orDie(wire((as === "person" ? person : cli).work.decideTaskApproval({
          path: { taskId: asked.body.taskId!, approvalId: block.approvalId },
          payload: { decision: "granted", digest },
          withResponse: true
        })))
      expect(yield* decide(card.operation_digest, "cli-api")).toMatchObject({ status: 403, body: { code: "PERSON_ONLY" } })
      expect(yield* decide("sha256:not-the-card")).toMatchObject({ body: { code: "APPROVAL_FORGED" } })
      const decisions = yield* Effect.all(Array.from({ length: 50 }, () => decide(card.operation_digest)), {
        concurrency: "unbounded"
      })
      const won = decisions.filter((d) => d.status === 200)
      expect(won).toHaveLength(1)
      expect(won[0]!.body).toEqual({ taskId: asked.body.taskId, approvalId: block.approvalId, decision: "granted", redispatched: true })
      expect(new Set(decisions.filter((d) => d.status !== 200).map((d) => d.body.code))).toEqual(new Set(["APPROVAL_ALREADY_DECIDED"]))

      // The continuation is a user message the node wrote, under the task's origin; its step ran, once.
      const entries = yield* Effect.flatMap(person.conversations.timeline({ path: { id }, urlParams: {} }), (t) => Effect.succeed(t.entries)).pipe(
        Effect.repeat({ until: (list) => list.at(-1)?.role === "assistant" && list.at(-1)?.status === "complete", times: 500 }),
        Effect.orDie
      )
      const continuation = entries.find((entry) => entry.hostWritten?.kind === "host-continuation")!
      expect(continuation).toMatchObject({ role: "user", origin: "cli-api", hostWritten: { kind: "host-continuation", version: 1 } })
      expect(ledgerRows(node.dataDir)).toHaveLength(2)
      const [used] = query(node.dataDir, "SELECT status, continued_as FROM task_approvals WHERE id = ?", block.approvalId)
      expect(used).toEqual({ status: "used", continued_as: continuation.taskId })
      // Approving one step approved nothing else: the same step from cli-api asks again.
      const next = yield* send(id, { text: "write probe" }, "cli-api")
      expect(toolBlock(next.body)).toMatchObject({ outcome: "approval-required" })
    })))
})
