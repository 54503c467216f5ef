/**
 * Task approvals on the test clock, through the real PackageTools layer over real SQLite stores, with a runtime
 * that fails the test if anything is sent and a ledger that refuses writes: a step that asks sends nothing; an
 * approval expires after its hour, is refused late and never runs; a denial ends it; only the card's digest and
 * the card's task decide it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Option, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as PackageToolsLive from "../../../layers/node/packages/PackageTools.js"
import * as NodeDatabase from "../../../layers/node/sql/NodeDatabase.js"
import * as SqlAuditLog from "../../../layers/node/sql/SqlAuditLog.js"
import * as SqlPackageRecords from "../../../layers/node/sql/SqlPackageRecords.js"
import * as SqlPreferenceStore from "../../../layers/node/sql/SqlPreferenceStore.js"
import * as SqlTaskApprovals from "../../../layers/node/sql/SqlTaskApprovals.js"
import { readPackageJson } from "../../../services/node/Manifest.js"
import { PackageRecords } from "../../../services/node/PackageRecords.js"
import { PackageTools } from "../../../services/node/PackageTools.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { ServiceRuntime } from "../../../services/node/ServiceRuntime.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"
import { failingLedger } from "../../support/Ledgers.js"
import * as NodeServer from "../../support/NodeServer.js"
import { probeFolder } from "../services/fixtures/Services.js"

/** Anything sent fails the test: nothing in these cases may reach a service. */
const silentRuntime = Layer.succeed(
  ServiceRuntime,
  ServiceRuntime.of({
    tools: () => Effect.dieMessage("a service was started"),
    call: () => Effect.dieMessage("a call was sent"),
    reach: () => Effect.dieMessage("a service was reached"),
    stop: () => Effect.succeed(false),
    stopAll: Effect.succeed(0),
    running: Effect.succeed([])
  })
)

const layer = () => {
  const stores = Layer.mergeAll(
    SqlPackageRecords.layer,
    SqlTaskApprovals.layer,
    SqlPreferenceStore.layer,
    SqlAuditLog.layer
  ).pipe(Layer.provideMerge(NodeDatabase.layer(NodeServer.makeDataDir())))
  return PackageToolsLive.layer().pipe(Layer.provideMerge(Layer.mergeAll(stores, silentRuntime, failingLedger)))
}

/** The probe package as installed, its `write_value` made risky. */
const installProbe = Effect.gen(function*() {
  const json = JSON.parse(fs.readFileSync(path.join(probeFolder, "package.json"), "utf8"))
  for (const tool of json.clark.tools) if (tool.name === "write_value") tool.risk = "external-write"
  const read = readPackageJson(json)
  if (Either.isLeft(read)) return yield* Effect.dieMessage(read.left.message)
  const records = yield* PackageRecords
  yield* records.recordInstall({
    packageId: read.right.name,
    source: "local",
    version: "1.0.0",
    digest: "sha256:probe",
    contentDigest: "sha256:probe",
    cachePath: probeFolder,
    manifest: read.right.clark,
    installedAt: "2026-01-01T00:00:00.000Z"
  }, null)
  yield* (yield* PreferenceStore).set("execution.machineTurns", "ask")
})

const context = { taskId: "task_1", conversationId: "conv_1", origin: "cli-api", channel: "text" } as const

/** Asks for the risky step and answers the approval the node wrote. */
const ask = Effect.gen(function*() {
  const tools = yield* PackageTools
  const outcome = yield* tools.call(context, "probe-service__write_value", { key: "k", value: "v" })
  expect(outcome).toMatchObject({
    status: "failed",
    endsTurn: true,
    details: { outcome: "approval-required", code: "APPROVAL_REQUIRED", risk: "external-write" }
  })
  const approval = yield* (yield* TaskApprovals).get(outcome.details.approvalId!)
  return Option.getOrThrow(approval)
})

describe("task approvals", () => {
  it.effect("ask without sending; expire after an hour without a decision, and a late grant runs nothing", () =>
    Effect.gen(function*() {
      yield* installProbe
      const approval = yield* ask
      expect(approval).toMatchObject({ status: "asked", origin: "cli-api", tool: "write_value", input: { key: "k", value: "v" } })
      expect(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt)).toBe(Duration.toMillis(Duration.hours(1)))
      const tools = yield* PackageTools
      yield* TestClock.adjust(Duration.minutes(59))
      // Still open a minute before: a forged digest is refused and changes nothing.
      expect(yield* Effect.flip(tools.decide("task_1", approval.approvalId, "granted", "sha256:other"))).toMatchObject({
        _tag: "ApprovalForged"
      })
      yield* TestClock.adjust(Duration.minutes(1))
      expect(yield* Effect.flip(tools.decide("task_1", approval.approvalId, "granted", approval.operationDigest))).toMatchObject({
        _tag: "ApprovalExpired"
      })
      expect(Option.getOrThrow(yield* (yield* TaskApprovals).get(approval.approvalId)).status).toBe("expired")
      // The same step asked again is a new question, not the expired one.
      const again = yield* ask
      expect(again.approvalId).not.toBe(approval.approvalId)
    }).pipe(Effect.provide(layer())))

  it.effect("a denial ends it; deciding again, for another task or an unknown id is refused", () =>
    Effect.gen(function*() {
      yield* installProbe
      const approval = yield* ask
      const tools = yield* PackageTools
      expect(yield* Effect.flip(tools.decide("task_other", approval.approvalId, "denied", approval.operationDigest))).toMatchObject({
        _tag: "ApprovalNotFound"
      })
      expect(yield* Effect.flip(tools.decide("task_1", "tap_missing", "denied", approval.operationDigest))).toMatchObject({
        _tag: "ApprovalNotFound"
      })
      const denied = yield* tools.decide("task_1", approval.approvalId, "denied", approval.operationDigest)
      expect(denied).toMatchObject({ status: "denied" })
      expect(yield* Effect.flip(tools.decide("task_1", approval.approvalId, "granted", approval.operationDigest))).toMatchObject({
        _tag: "ApprovalAlreadyDecided",
        status: "denied"
      })
      // A denied step is not granted: the same step asks again.
      yield* ask
    }).pipe(Effect.provide(layer())))

  it.effect("a grant covers only the one operation it names: another input asks again, the grant unspent", () =>
    Effect.gen(function*() {
      yield* installProbe
      const approval = yield* ask
      const tools = yield* PackageTools
      yield* tools.decide("task_1", approval.approvalId, "granted", approval.operationDigest)
      // Another input is another operation: it asks, the grant stays unspent.
      const other = yield* tools.call(context, "probe-service__write_value", { key: "k", value: "other" })
      expect(other.details.outcome).toBe("approval-required")
      expect(Option.getOrThrow(yield* (yield* TaskApprovals).get(approval.approvalId)).status).toBe("granted")
    }).pipe(Effect.provide(layer())))

  it.effect("a change of the execution preferences applies to the very next call (set, then undone)", () =>
    Effect.gen(function*() {
      yield* installProbe
      const tools = yield* PackageTools
      const preferences = yield* PreferenceStore
      const step = Effect.map(tools.call(context, "probe-service__write_value", { key: "k", value: "v" }), (o) => o.details.outcome)
      expect(yield* step).toBe("approval-required")
      yield* preferences.set("execution.denyRules", [{ package: "@clark-tests/probe-service", tool: "write_value" }])
      expect(yield* step).toBe("denied")
      yield* preferences.undo("execution.denyRules")
      expect(yield* step).toBe("approval-required")
      yield* preferences.set("execution.denyRules", [{ package: "@clark-tests/probe-service" }])
      expect(yield* step).toBe("denied")
    }).pipe(Effect.provide(layer())))
})
