/**
 * The inbox over the node's database: notices read a page at a time with the actions that fit them now, the
 * waiting approvals and unknown effects, skipped versions; each notice action checked by the rules of
 * services/node/Notices.ts, carried out by one conditional write (or by what it asks for: the turn engine's
 * ask-again, background work's retry, the installer's install), and audited with its surface, refusals too.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, Layer, Option, Ref } from "effect"
import { createHash } from "node:crypto"
import type { Notice, NoticeAction } from "../../schema/node/Inbox.js"
import type { Listing } from "../../schema/node/Package.js"
import { PersonOnlyRefused } from "../../services/node/AccessErrors.js"
import { AuditLog } from "../../services/node/AuditLog.js"
import { BackgroundWork } from "../../services/node/BackgroundWork.js"
import { type ActionOutcome, Inbox, type NewNotice } from "../../services/node/Inbox.js"
import {
  ActionInProgress,
  ActionNotOffered,
  ActionUnavailable,
  NotAnUpdate,
  NoticeNotFound,
  SkippedVersionNotFound,
  SnoozeInvalid,
  SurfaceOnlyAction,
  UndoExpired,
  UnknownNoticeAction
} from "../../services/node/InboxErrors.js"
import { Installer } from "../../services/node/Installer.js"
import { Ledger } from "../../services/node/Ledger.js"
import { ListingCache } from "../../services/node/ListingCache.js"
import {
  busyLeaseMillis,
  canRestore,
  checkSnooze,
  classifyAction,
  compareVersions,
  engineUpdateOf,
  type EngineVersions,
  isSkipped,
  type NoticeFacts,
  type NoticeRecord,
  offeredActions,
  updateKinds,
  wordsOf
} from "../../services/node/Notices.js"
import { PackageDirectory } from "../../services/node/PackageDirectory.js"
import { PackageRecords } from "../../services/node/PackageRecords.js"
import { PackageTools } from "../../services/node/PackageTools.js"
import { TaskApprovals } from "../../services/node/TaskApprovals.js"
import { TurnEngine } from "../../services/node/TurnEngine.js"
import { EngineConfig } from "./inbox/Engine.js"
import * as Waiting from "./inbox/Waiting.js"
import * as SqlNotices from "./sql/SqlNotices.js"

/** The directory is asked for newer versions at most this often (it may ask the marketplace over the network). */
export const updateCheckMillis = 60_000
/** How long a read of the inbox waits for the directory's answer. */
const updateCheckWait = Duration.seconds(2)

const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))

/** One notice per kind and subject, whoever writes it first. */
export const noticeIdFor = (kind: string, subjectId: string) =>
  `ntc_${createHash("sha256").update(`${kind}\u0000${subjectId}`).digest("hex").slice(0, 24)}`

const packageOf = (notice: NoticeRecord) => {
  const name = typeof notice.data.name === "string" ? notice.data.name : ""
  const version = typeof notice.data.version === "string" ? notice.data.version : ""
  return { kind: notice.kind === "engine-update" ? "pi" as const : "package" as const, name, version }
}

export const make = (engineVersions: EngineVersions | null) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const engine = yield* TurnEngine
  const work = yield* BackgroundWork
  const installer = yield* Installer
  const directory = yield* PackageDirectory
  const records = yield* PackageRecords
  const approvals = yield* TaskApprovals
  const tools = yield* PackageTools
  const ledger = yield* Ledger
  const listings = yield* ListingCache
  const audit = yield* AuditLog
  const now = Effect.map(Clock.currentTimeMillis, iso)
  const notices = SqlNotices.make(sql, now)
  /** The marketplace listings of the last update check, by package. */
  const lastCheck = yield* Ref.make<{ readonly at: number; readonly listings: ReadonlyMap<string, Listing> } | null>(null)

  const notify = (notice: NewNotice) =>
    Effect.gen(function*() {
      if (notice.source != null && (yield* notices.isSuppressed(notice.source))) return null
      const id = noticeIdFor(notice.kind, notice.subjectId)
      yield* notices.insert(id, notice)
      return id
    })

  // A launch whose application knows a newer engine says so once per version (the same id on every launch, so a
  // dismissed one stays dismissed); suppress and skip-version apply as to any update.
  const engineNotice = engineUpdateOf(engineVersions)
  if (engineNotice !== null) yield* notify(engineNotice)

  /** A notice for each installed marketplace package the directory lists in a newer, unskipped version. */
  const checkUpdates = Effect.gen(function*() {
    const at = yield* Clock.currentTimeMillis
    const last = yield* Ref.get(lastCheck)
    if (last !== null && at - last.at < updateCheckMillis) return last.listings
    // A marketplace that is slow to answer must not hold the inbox: after the wait, the last listings stand.
    const answered = yield* Effect.timeoutOption(directory.list(undefined), updateCheckWait)
    if (Option.isNone(answered)) {
      const kept = last?.listings ?? new Map<string, Listing>()
      yield* Ref.set(lastCheck, { at, listings: kept })
      return kept
    }
    const page = answered.value
    const listings = new Map(page.packages.filter((l) => l.source === "marketplace").map((l) => [l.packageId, l]))
    const skipped = yield* notices.skipped
    for (const listing of listings.values()) {
      if (listing.installed === null || compareVersions(listing.version, listing.installed.version) <= 0) continue
      const skippedOfIt = skipped.filter((s) => s.kind === "package" && s.name === listing.packageId).map((s) => s.version)
      if (isSkipped(listing.version, skippedOfIt)) continue
      yield* notify({
        kind: "package-update",
        conversationId: null,
        subjectId: `${listing.packageId}@${listing.version}`,
        data: { name: listing.packageId, version: listing.version, installedVersion: listing.installed.version },
        source: `package:${listing.packageId}`
      })
    }
    // A marketplace that did not answer tells nothing about what it lists: the old listings stay.
    const kept = page.marketplace.status === "ok" ? listings : last?.listings ?? new Map<string, Listing>()
    yield* Ref.set(lastCheck, { at, listings: kept })
    return kept
  })

  const factsOf = (page: ReadonlyArray<SqlNotices.StoredNotice>, listings: ReadonlyMap<string, Listing> | null) =>
    Effect.gen(function*() {
      const installedPackages = page.some((n) => n.kind === "package-update" || n.kind === "task-approval-expired")
        ? yield* records.installed
        : []
      const installed = new Map(installedPackages.map((p) => [p.packageId, p.version]))
      const digests = new Map(installedPackages.map((p) => [p.packageId, p.digest]))
      return (notice: SqlNotices.StoredNotice): NoticeFacts => ({
        conversationExists: notice.conversationExists === null ? null : notice.conversationExists !== 0,
        workExists: notice.workExists !== 0,
        ...(notice.kind === "package-update"
          ? {
            installedVersion: installed.get(packageOf(notice).name) ?? null,
            listed: listings === null || listings.size === 0 ? undefined : listings.has(packageOf(notice).name)
          }
          : {}),
        ...(notice.kind === "task-approval-expired"
          ? { packageCurrent: digests.get(String(notice.data.packageId)) === notice.data.packageDigest }
          : {})
      })
    })

  const view = (notice: NoticeRecord, facts: NoticeFacts, at: number): Notice => {
    const words = wordsOf(notice.kind, notice.data)
    const str = (key: string) => (typeof notice.data[key] === "string" ? { [key]: notice.data[key] as string } : {})
    const subject = notice.subjectId ?? ""
    return {
      noticeId: notice.id,
      kind: notice.kind,
      title: words.title,
      body: words.body,
      ref: { kind: "notice", id: notice.id },
      conversationId: notice.conversationId,
      ...(notice.kind === "work-failed" ? { workId: subject, taskId: subject } : str("taskId")),
      // A job is work too (GET /work lists it under its job id).
      ...(notice.kind === "job-ended" || notice.kind === "job-failed" ? { workId: subject } : {}),
      ...(notice.kind === "unknown-effect" ? { effectId: subject } : {}),
      ...(notice.kind === "question-expired" ? { questionId: subject } : {}),
      ...(updateKinds.has(notice.kind)
        ? { package: { kind: packageOf(notice).kind, name: packageOf(notice).name }, version: packageOf(notice).version }
        : {}),
      createdAt: notice.createdAt,
      readAt: notice.readAt,
      snoozedUntil: notice.snoozedUntil !== null && Date.parse(notice.snoozedUntil) > at ? notice.snoozedUntil : null,
      dismissedAt: notice.dismissedAt,
      suppressed: notice.suppressed,
      actions: offeredActions(notice, facts, at)
    }
  }

  const waiting = Waiting.make({ records, approvals, ledger, listings })

  /** A notice the inbox no longer shows: a skipped version, an unknown effect the person already answered. */
  const hidden = (skipped: ReadonlyArray<{ kind: string; name: string; version: string }>, unknown: ReadonlySet<string>) =>
  (notice: NoticeRecord) => {
    if (updateKinds.has(notice.kind)) {
      const pkg = packageOf(notice)
      // The application runs that engine now (or a newer one): the notice is no longer news.
      if (pkg.kind === "pi" && engineVersions !== null && compareVersions(pkg.version, engineVersions.running) <= 0) return true
      return isSkipped(pkg.version, skipped.filter((s) => s.kind === pkg.kind && s.name === pkg.name).map((s) => s.version))
    }
    return notice.kind === "unknown-effect" && notice.subjectId !== null && !unknown.has(notice.subjectId)
  }

  const read: Inbox["Type"]["read"] = ({ before, limit }) =>
    Effect.gen(function*() {
      const listings = yield* checkUpdates
      const rows = yield* notices.page(limit, before)
      const skipped = yield* notices.skipped
      const pending = yield* waiting
      const more = rows.length > limit
      const page = rows.slice(0, limit)
      const shown = page.filter((n) => !hidden(skipped, pending.unknownEffects)(n))
      const facts = yield* factsOf(shown, listings)
      const at = yield* Clock.currentTimeMillis
      return {
        notices: shown.map((n) => view(n, facts(n), at)),
        waiting: pending.items,
        skippedVersions: skipped,
        nextCursor: more ? SqlNotices.cursorOf(page[page.length - 1]!) : null
      }
    })

  const done = (noticeId: string, action: NoticeAction, extra: Record<string, unknown> = {}): ActionOutcome => ({
    _tag: "Done",
    body: { noticeId, action, outcome: "done", ...extra }
  })

  const changed = (notice: NoticeRecord, action: NoticeAction, moved: boolean, extra: Record<string, unknown> = {}) =>
    moved ? Effect.succeed(done(notice.id, action, extra)) : Effect.fail(new ActionNotOffered({ noticeId: notice.id, action }))

  const update = (notice: NoticeRecord, caller: Parameters<Inbox["Type"]["act"]>[3]) =>
    Effect.gen(function*() {
      const pkg = packageOf(notice)
      const at = yield* Clock.currentTimeMillis
      if (!(yield* notices.claim(notice.id, iso(at - busyLeaseMillis)))) {
        return yield* new ActionInProgress({ noticeId: notice.id, action: "update" })
      }
      const outcome = yield* Effect.gen(function*() {
        // Checked again under the claim: a press that read the notice before another's install ended finds it current.
        const installed = yield* records.installedOne(pkg.name)
        if (Option.isSome(installed) && compareVersions(installed.value.version, pkg.version) >= 0) {
          return yield* new ActionUnavailable({ noticeId: notice.id, action: "update", reason: "already-current" })
        }
        return yield* installer.install({ packageId: pkg.name, version: pkg.version }, {
          kind: "person",
          surface: caller.surface
        })
      }).pipe(Effect.ensuring(notices.release(notice.id)))
      return outcome._tag === "ApprovalRequired"
        ? {
          _tag: "ApprovalRequired",
          body: { noticeId: notice.id, action: "update", outcome: "approval-required", approvalId: outcome.approvalId }
        } as const
        : done(notice.id, "update", {
          version: outcome.version,
          pendingCapabilities: outcome.pendingCapabilities,
          deniedCapabilities: outcome.deniedCapabilities
        })
    })

  /** Ask-again of an expired task approval: the same operation asked anew, once. */
  const askApprovalAgain = (notice: NoticeRecord) =>
    Effect.gen(function*() {
      const outcome = yield* tools.askAgain(notice.subjectId ?? "")
      switch (outcome._tag) {
        case "AskedAgain":
          return done(notice.id, "ask-again", { approvalId: outcome.approval.approvalId, taskId: outcome.approval.taskId })
        case "PackageGone":
          return yield* new ActionUnavailable({ noticeId: notice.id, action: "ask-again", reason: "package-gone" })
        case "NotExpired":
        case "AlreadyAskedAgain":
          return yield* new ActionNotOffered({ noticeId: notice.id, action: "ask-again" })
      }
    })

  const perform = (notice: NoticeRecord, action: NoticeAction, until: string | undefined, caller: Parameters<Inbox["Type"]["act"]>[3]) =>
    Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      switch (action) {
        case "mark-read":
          return yield* changed(notice, action, yield* notices.change(notice.id, "read"))
        case "mark-unread":
          return yield* changed(notice, action, yield* notices.change(notice.id, "unread"))
        case "dismiss":
          return yield* changed(notice, action, yield* notices.change(notice.id, "dismiss"))
        case "restore":
          if (notice.dismissedAt !== null && !canRestore(notice.dismissedAt, at)) {
            return yield* new UndoExpired({ noticeId: notice.id, dismissedAt: notice.dismissedAt })
          }
          return yield* changed(notice, action, yield* notices.change(notice.id, "restore"))
        case "snooze": {
          const checked = checkSnooze(until, at)
          if (checked._tag === "Invalid") return yield* new SnoozeInvalid({ problem: checked.problem })
          return yield* changed(notice, action, yield* notices.change(notice.id, "snooze", checked.until), {
            snoozedUntil: checked.until
          })
        }
        case "unsnooze":
          return yield* changed(notice, action, yield* notices.change(notice.id, "unsnooze"))
        case "suppress":
        case "unsuppress":
          return yield* changed(notice, action, yield* notices.suppress(notice.source ?? "", action === "suppress"))
        case "retry": {
          const retried = yield* work.retry(notice.subjectId ?? "", caller)
          return done(notice.id, action, { workId: retried.workId })
        }
        case "ask-again": {
          if (notice.kind === "task-approval-expired") return yield* askApprovalAgain(notice)
          const asked = yield* engine.askAgain(notice.conversationId ?? "", notice.subjectId ?? "")
          return done(notice.id, action, asked.askedAgainAs === undefined ? {} : { questionId: asked.askedAgainAs })
        }
        case "update":
          return yield* update(notice, caller)
        case "skip-version": {
          const pkg = packageOf(notice)
          yield* notices.skip(pkg.kind, pkg.name, pkg.version)
          return done(notice.id, action, { version: pkg.version })
        }
      }
    })

  const act: Inbox["Type"]["act"] = (noticeId, rawAction, payload, caller) =>
    Effect.gen(function*() {
      const name = classifyAction(rawAction)
      switch (name._tag) {
        case "Unknown":
          return yield* new UnknownNoticeAction({ given: rawAction.slice(0, 40) })
        case "OwnRoute":
          return yield* new PersonOnlyRefused({ surface: caller.surface })
        case "Surface":
          return yield* new SurfaceOnlyAction({ action: name.action })
      }
      const action = name.action
      if (action === "update" && caller.surface !== "person") return yield* new PersonOnlyRefused({ surface: caller.surface })
      const found = yield* notices.get(noticeId)
      if (Option.isNone(found)) return yield* new NoticeNotFound({ noticeId })
      const notice = found.value
      const listings = updateKinds.has(notice.kind) ? yield* checkUpdates : null
      const facts = (yield* factsOf([notice], listings))(notice)
      const offered = offeredActions(notice, facts, yield* Clock.currentTimeMillis).find((o) => o.action === action)
      if (offered === undefined) return yield* new ActionNotOffered({ noticeId, action })
      if (offered.unavailable !== undefined) {
        return yield* new ActionUnavailable({ noticeId, action, reason: offered.unavailable })
      }
      return yield* perform(notice, action, payload.until, caller)
    }).pipe(
      Effect.tapBoth({
        onFailure: (error) => auditAction(noticeId, rawAction, caller, error._tag),
        onSuccess: (outcome) => auditAction(noticeId, rawAction, caller, outcome.body.outcome)
      })
    )

  const auditAction = (noticeId: string, action: string, caller: Parameters<Inbox["Type"]["act"]>[3], outcome: string) =>
    audit.append({
      kind: "notice-action",
      surface: caller.surface,
      channel: caller.channel,
      detail: { noticeId, action: action.slice(0, 40), outcome }
    })

  const skipVersion: Inbox["Type"]["skipVersion"] = (noticeId, skip, caller) =>
    Effect.gen(function*() {
      const found = yield* notices.get(noticeId)
      if (Option.isNone(found)) return yield* new NoticeNotFound({ noticeId })
      const notice = found.value
      if (!updateKinds.has(notice.kind)) return yield* new NotAnUpdate({ noticeId, kind: notice.kind })
      const pkg = packageOf(notice)
      yield* skip ? notices.skip(pkg.kind, pkg.name, pkg.version) : notices.unskip(pkg.kind, pkg.name, pkg.version)
      yield* audit.append({
        kind: skip ? "version-skipped" : "version-unskipped",
        surface: caller.surface,
        channel: caller.channel,
        detail: { noticeId, ...pkg }
      })
      return { noticeId, ...pkg, skipped: skip }
    })

  const removeSkipped: Inbox["Type"]["removeSkipped"] = (skipped, caller) =>
    Effect.gen(function*() {
      if (!(yield* notices.unskip(skipped.kind, skipped.name, skipped.version))) {
        return yield* new SkippedVersionNotFound(skipped)
      }
      yield* audit.append({ kind: "version-unskipped", surface: caller.surface, channel: caller.channel, detail: skipped })
      return { removed: true }
    })

  return Inbox.of({ read, act, skipVersion, removeSkipped, notify })
})

/** `undefined` reads the engine's versions from CC_ENGINE_VERSION and CC_ENGINE_NEWEST; `null` knows none. */
export const layer = (engine?: EngineVersions | null) =>
  Layer.effect(Inbox, engine === undefined ? Effect.flatMap(Effect.orDie(EngineConfig), make) : make(engine))
