/**
 * What waits for the person, as GET /inbox lists it: install approvals (only while the directory still publishes
 * that exact package, version and digest), task approvals and unknown effects. The directory's answers come from
 * the ListingCache: known ones at once, and one shared request per package the read knows nothing about.
 */
import { Clock, DateTime, Effect } from "effect"
import type { WaitingItem } from "../../../schema/node/Inbox.js"
import { stillPublished } from "../../../services/node/InstallPolicy.js"
import type { Ledger } from "../../../services/node/Ledger.js"
import type { ListingCache, Published } from "../../../services/node/ListingCache.js"
import type { PackageRecords } from "../../../services/node/PackageRecords.js"
import type { TaskApprovals } from "../../../services/node/TaskApprovals.js"

export interface Sources {
  readonly records: PackageRecords["Type"]
  readonly approvals: TaskApprovals["Type"]
  readonly ledger: Ledger["Type"]
  readonly listings: ListingCache["Type"]
}

export const make = ({ approvals, ledger, listings, records }: Sources) =>
  Effect.gen(function*() {
    const at = DateTime.formatIso(DateTime.unsafeMake(yield* Clock.currentTimeMillis))
    // Listed only while the directory still publishes that exact package, version and digest (a folder changed
    // on disk, a marketplace listing moved on or a directory that did not answer in time: not listed for now).
    const open = (yield* records.waiting).filter((a) => a.expiresAt > at)
    const answers = open.length === 0
      ? new Map<string, Published>()
      : yield* listings.published([...new Set(open.map((a) => a.packageId))])
    const listed = open.filter((a) => stillPublished(a, answers.get(a.packageId) ?? undefined))
    const installs = listed.map((a): WaitingItem => ({
      kind: "install-approval",
      approvalId: a.approvalId,
      package: a.packageId,
      version: a.version,
      asks: a.asksFor,
      riskTier: a.riskTier,
      operationDigest: a.operationDigest,
      requestedAt: a.requestedAt,
      expiresAt: a.expiresAt
    }))
    const tasks = (yield* approvals.waiting).filter((a) => a.expiresAt > at).map((a): WaitingItem => ({
      kind: "task-approval",
      approvalId: a.approvalId,
      taskId: a.taskId,
      conversationId: a.conversationId,
      summary: `${a.packageId} · ${a.tool}`,
      origin: a.origin,
      operationDigest: a.operationDigest,
      requestedAt: a.requestedAt,
      expiresAt: a.expiresAt,
      input: a.input
    }))
    const effects = (yield* ledger.unknownEffects).map((e): WaitingItem => ({
      kind: "unknown-effect",
      effectId: e.effectId,
      taskId: e.taskId,
      conversationId: e.conversationId,
      summary: e.summary,
      recordedAt: e.recordedAt
    }))
    return { items: [...installs, ...tasks, ...effects], unknownEffects: new Set(effects.map((e) => e.kind === "unknown-effect" ? e.effectId : "")) }
  })
