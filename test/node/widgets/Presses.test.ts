/**
 * Pressing a placed widget's bound actions on the real node, with the probe service running over MCP in its own
 * process: rules 1-7 and 10 of the spec's "Widget action press" (view-state is in ViewState.test.ts, restarts in
 * Restart.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { ledgerFile } from "../../../layers/node/ledger/LedgerDatabase.js"
import { makeReadOnly } from "../../support/Ledgers.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"
import { conversation, eventually, query, timeline, typedClient } from "../../support/NodeFixtures.js"
import { install, ledgerRows, place, press, pressOf, probeId, script, widgetProbe } from "./Fixtures.js"

const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer({ script, ...(dataDir === undefined ? {} : { dataDir }) }))

const setup = (options: { readonly readPerMinute?: number } = {}) =>
  Effect.gen(function*() {
    yield* install(widgetProbe(options))
    const id = yield* conversation
    const placed = yield* place(id)
    return { id, placed }
  })

const widgetEntries = (id: string) =>
  Effect.map(timeline(id), (entries) => entries.filter((e: any) => e.hostWritten?.kind === "widget-action"))

describe("pressing a tool binding", () => {
  it.scoped("rule 1: a read answers 200 done with the tool's result; the press is in the timeline and the revision moves", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const write = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "colour", value: "green" }, "w-1"))
      expect(write.status).toBe(200)
      expect(write.body).toMatchObject({ outcome: "done", invocationId: "w-1", instanceId: placed.instanceId, revision: 2 })
      // A write goes through the ledger before it is sent, and its answer is recorded.
      const [effect] = ledgerRows(node.dataDir)
      expect(effect).toMatchObject({ task_id: write.body.taskId, package_id: probeId, tool: "write_value", status: "answered" })

      const read = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "colour" }, "r-1", 2))
      expect(read).toMatchObject({
        status: 200,
        body: {
          outcome: "done",
          revision: 3,
          result: { text: "green" },
          workflow: [{ step: "ledger", status: "skipped" }, { step: "call", status: "done" }]
        }
      })
      // A read writes no effect.
      expect(ledgerRows(node.dataDir)).toHaveLength(1)
      const entries = yield* widgetEntries(id)
      expect(entries.map((e: any) => [e.origin, e.blocks[0].name, e.blocks[0].status])).toEqual([
        ["person", "probe-panel.write", "done"],
        ["person", "probe-panel.read", "done"]
      ])
      const client = yield* typedClient()
      expect((yield* client.widgets.instance({ path: { id, instanceId: placed.instanceId } })).revision).toBe(3)
    })))

  it.scoped("the call's audit row is written once, with the press's own row in the press's closing unit", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const read = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "colour" }, "a-1"))
      expect(read.status).toBe(200)
      const write = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "k", value: "v" }, "a-2", 2), "cli-api")
      expect(write.status).toBe(200)
      // A repeat is answered from the store: no call, so no row.
      expect(yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "colour" }, "a-1"))).toEqual(read)
      const rows = query(node.dataDir, "SELECT id, kind, surface, channel, detail FROM audit_log WHERE kind IN ('tool-call', 'widget-press') ORDER BY id")
        .map((row) => ({ ...row, detail: JSON.parse(row.detail) }))
      expect(rows.map((row) => [row.kind, row.surface, row.detail.taskId ?? row.detail.invocationId])).toEqual([
        ["tool-call", "person", read.body.taskId],
        ["widget-press", "person", "a-1"],
        ["tool-call", "cli-api", write.body.taskId],
        ["widget-press", "cli-api", "a-2"]
      ])
      expect(rows[0].detail).toMatchObject({ packageId: probeId, tool: "read_value", status: "done" })
      expect(rows[2].detail).toMatchObject({ tool: "write_value", status: "done", effectId: expect.stringMatching(/./) })
      // Each call's row is written in the unit that stores its press's answer: the two rows are consecutive.
      expect([rows[1].id - rows[0].id, rows[3].id - rows[2].id]).toEqual([1, 1])
    })))

  it.scoped("rule 6: the same invocationId is answered from the store and never sent again", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const first = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "n", value: "1" }, "same"))
      expect(first.status).toBe(200)
      // The repeat carries what the instance was then: the stored answer wins over the checks of now.
      const again = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "n", value: "2" }, "same"))
      expect(again).toEqual(first)
      // Concurrent identical presses: one call, one answer.
      const payload = pressOf(placed, "write", { key: "m", value: "x" }, "together", 2)
      const answers = yield* Effect.all([1, 2, 3, 4].map(() => press(id, placed.instanceId, payload)), { concurrency: "unbounded" })
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1)
      expect(answers[0]!.status).toBe(200)
      expect(ledgerRows(node.dataDir).map((row) => JSON.parse(row.input))).toEqual([
        { key: "n", value: "1" },
        { key: "m", value: "x" }
      ])
    })))

  it.scoped("rule 5: a call whose process dies is uncertain, recorded, and an unknown effect the inbox asks about", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const crashed = yield* press(id, placed.instanceId, pressOf(placed, "crash", {}, "c-1"))
      expect(crashed.status).toBe(502)
      expect(crashed.body).toMatchObject({
        code: "SERVICE_TOOL_FAILED",
        outcome: "uncertain",
        mayHaveRun: true,
        recorded: true,
        taskId: expect.stringMatching(/^task_/),
        workflow: [{ step: "ledger", status: "done" }, { step: "call", status: "uncertain", code: "SERVICE_TOOL_FAILED" }]
      })
      const [effect] = ledgerRows(node.dataDir)
      expect(effect).toMatchObject({ id: crashed.body.effectId, task_id: crashed.body.taskId, status: "unknown", may_have_run: 1 })
      expect(query(node.dataDir, "SELECT kind, subject_id FROM notices WHERE kind = 'unknown-effect'")).toEqual([
        { kind: "unknown-effect", subject_id: crashed.body.effectId }
      ])
      // Stored: asking again does not send it again.
      expect(yield* press(id, placed.instanceId, pressOf(placed, "crash", {}, "c-1"))).toEqual(crashed)
      expect(ledgerRows(node.dataDir)).toHaveLength(1)
    })))

  it.scoped("rule 5: a read that did not finish is uncertain with readOnly, and not recorded", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const failed = yield* press(id, placed.instanceId, pressOf(placed, "fail", {}, "f-1"))
      expect(failed.status).toBe(502)
      expect(failed.body).toMatchObject({
        code: "SERVICE_TOOL_FAILED",
        outcome: "uncertain",
        mayHaveRun: true,
        recorded: false,
        readOnly: true
      })
      expect(ledgerRows(node.dataDir)).toEqual([])
      expect(query(node.dataDir, "SELECT id FROM notices WHERE kind = 'unknown-effect'")).toEqual([])
      // A tool that answers with an error ran: done, its result says so.
      const soft = yield* press(id, placed.instanceId, pressOf(placed, "fail", { soft: true }, "f-2", 2))
      expect(soft).toMatchObject({ status: 200, body: { outcome: "done", workflow: [{}, { step: "call", status: "failed" }] } })
    })))

  it.scoped("rule 4: with the ledger unwritable a write is 503 LEDGER_UNAVAILABLE and nothing is sent", () =>
    Effect.gen(function*() {
      const dataDir = NodeServer.makeDataDir()
      const { id, placed } = yield* withNode(setup(), dataDir)
      const restore = makeReadOnly(ledgerFile(dataDir))
      yield* Effect.addFinalizer(() => Effect.sync(restore))
      yield* withNode(
        Effect.gen(function*() {
          const refused = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "colour", value: "red" }, "l-1"))
          expect(refused.status).toBe(503)
          expect(refused.body).toMatchObject({
            code: "LEDGER_UNAVAILABLE",
            outcome: "refused",
            mayHaveRun: false,
            recorded: false,
            workflow: [{ step: "ledger", status: "failed" }, { step: "call", status: "not-run" }]
          })
          // Nothing reached the service, and nothing moved.
          const read = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "colour" }, "l-2"))
          expect(read.body).toMatchObject({ outcome: "done", revision: 2, result: { text: "" } })
        }),
        dataDir
      )
    }))

  it.scoped("rule 3: over the binding's presses a minute is 429 RATE_LIMITED, on the clock, counting only admitted presses", () =>
    withNode(Effect.gen(function*() {
      const { id, placed } = yield* setup({ readPerMinute: 2 })
      let revision = 1
      for (const n of [1, 2]) {
        const ok = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "k" }, `rate-${n}`, revision))
        expect(ok.status).toBe(200)
        revision = ok.body.revision
      }
      yield* TestClock.adjust(Duration.seconds(20))
      const limited = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "k" }, "rate-3", revision))
      expect(limited.status).toBe(429)
      expect(limited.body).toMatchObject({ code: "RATE_LIMITED", limit: 2, retryAfterMs: 40_000, mayHaveRun: false })
      // Another binding has its own minute.
      const write = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "k", value: "v" }, "rate-w", revision))
      expect(write.status).toBe(200)
      revision = write.body.revision
      yield* TestClock.adjust(Duration.seconds(40))
      const later = yield* press(id, placed.instanceId, pressOf(placed, "read", { key: "k" }, "rate-3", revision))
      expect(later.status).toBe(200)
    })))

  it.scoped("stale revisions, other digests, unknown bindings and inputs that do not fit are refused before anything is sent", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const cases = [
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-1"), expectedRevision: 7 }, 400, "INVALID_INPUT", { field: "expectedRevision", reason: "stale-revision" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-2"), expectedBindingDigest: placed.bindings[0].digest }, 400, "INVALID_INPUT", { reason: "binding-digest-mismatch" }],
        [pressOf(placed, "write", { key: "a" }, "x-3"), 400, "INVALID_INPUT", { field: "input", reason: "input" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-4"), actionBindingId: "nope" }, 400, "UNSUPPORTED_ACTION", { reason: "unknown-binding" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-5"), variant: "view-state", sequence: 1 }, 400, "UNSUPPORTED_ACTION", { reason: "variant-on-other-binding" }],
        [pressOf(placed, "write", { key: "a", value: "b" }, "view-state:1"), 400, "INVALID_SCHEMA", { reason: "reserved-invocation-id" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-6"), sequence: 1 }, 400, "INVALID_SCHEMA", { reason: "sequence-without-variant" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-7"), variant: "view-state" }, 400, "INVALID_SCHEMA", { reason: "variant-without-sequence" }],
        [{ ...pressOf(placed, "write", { key: "a", value: "b" }, "x-8"), variant: "seek", sequence: 1 }, 400, "INVALID_SCHEMA", { reason: "unknown-variant" }]
      ] as const
      for (const [payload, status, code, members] of cases) {
        const answer = yield* press(id, placed.instanceId, payload)
        expect({ id: payload.invocationId, status: answer.status, body: answer.body }).toMatchObject({
          id: payload.invocationId,
          status,
          body: { code, ...members }
        })
      }
      expect(ledgerRows(node.dataDir)).toEqual([])
      expect(yield* widgetEntries(id)).toEqual([])
      // A refusal before the claim stores nothing: the same invocation id, now fitting, runs.
      const fitting = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "a", value: "b" }, "x-3"))
      expect(fitting.status).toBe(200)
    })))

  it.scoped("a job tool's binding starts one job: done with its job_ reference, listed for this widget, the same on a repeat", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const answer = yield* press(id, placed.instanceId, pressOf(placed, "reindex", {}, "j-1"))
      expect(answer).toMatchObject({
        status: 200,
        body: { outcome: "done", invocationId: "j-1", instanceId: placed.instanceId, job: expect.stringMatching(/^job_/) }
      })
      const jobs = yield* node.request("GET", `/conversations/${id}/widgets/${placed.instanceId}/jobs`)
      expect(jobs.status).toBe(200)
      expect(jobs.body.jobs.map((job: any) => job.jobId)).toEqual([answer.body.job])
      // The invocation id is never sent twice: a repeat answers the same job and starts no other.
      const again = yield* press(id, placed.instanceId, pressOf(placed, "reindex", {}, "j-1"))
      expect(again).toMatchObject({ status: 200, body: { job: answer.body.job } })
      expect(query(node.dataDir, "SELECT id FROM jobs")).toEqual([{ id: answer.body.job }])
    })))

  it.scoped("a machine surface's press carries its own origin into the ledger and the timeline", () =>
    withNode(Effect.gen(function*() {
      const node = yield* TestNode
      const { id, placed } = yield* setup()
      const answer = yield* press(id, placed.instanceId, pressOf(placed, "write", { key: "o", value: "1" }, "o-1"), "cli-api")
      expect(answer.status).toBe(200)
      expect(ledgerRows(node.dataDir)[0]).toMatchObject({ origin: "cli-api" })
      expect((yield* widgetEntries(id)).map((e: any) => e.origin)).toEqual(["cli-api"])
      const audit = yield* eventually(
        Effect.sync(() => query(node.dataDir, "SELECT surface, detail FROM audit_log WHERE kind = 'widget-press'")),
        (rows) => rows.length === 1,
        "the press's audit entry"
      )
      expect(audit[0].surface).toBe("cli-api")
      expect(JSON.parse(audit[0].detail)).toMatchObject({ invocationId: "o-1", outcome: "done" })
    })))
})
