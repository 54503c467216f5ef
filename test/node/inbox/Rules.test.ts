/** The notice rules of services/node/Notices.ts, table by table. */
import { describe, expect, it } from "vitest"
import {
  canRestore,
  checkSnooze,
  classifyAction,
  compareVersions,
  isSkipped,
  jobNoticeKind,
  type NoticeRecord,
  offeredActions,
  rawActionOf,
  wordsOf
} from "../../../services/node/Notices.js"

const base: NoticeRecord = {
  id: "ntc_1",
  kind: "question-expired",
  conversationId: "c_1",
  subjectId: "q_1",
  data: {},
  createdAt: "2026-01-01T00:00:00.000Z",
  readAt: null,
  dismissedAt: null,
  snoozedUntil: null,
  source: null,
  suppressed: false,
  busySince: null
}
const now = Date.parse("2026-01-01T01:00:00.000Z")
const names = (offered: ReadonlyArray<{ action: string; unavailable?: string | undefined }>) =>
  offered.map((o) => (o.unavailable === undefined ? o.action : `${o.action}:${o.unavailable}`))

describe("offeredActions", () => {
  it.each<[string, Partial<NoticeRecord>, Parameters<typeof offeredActions>[1], ReadonlyArray<string>]>([
    ["expired question", {}, { conversationExists: true }, ["ask-again", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["its conversation gone", {}, { conversationExists: false }, ["ask-again:conversation-gone", "open:conversation-gone", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["read and snoozed", { readAt: "2026-01-01T00:30:00.000Z", snoozedUntil: "2026-01-02T00:00:00.000Z" }, { conversationExists: true }, ["ask-again", "open", "mark-unread", "unsnooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["snooze passed", { snoozedUntil: "2026-01-01T00:59:59.000Z" }, { conversationExists: true }, ["ask-again", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["dismissed", { dismissedAt: "2026-01-01T00:59:00.000Z" }, { conversationExists: true }, ["restore"]],
    ["failed work", { kind: "work-failed" }, { conversationExists: true, workExists: true }, ["retry", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["failed work gone", { kind: "work-failed", conversationId: null }, { conversationExists: null, workExists: false }, ["retry:work-gone", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["unknown effect", { kind: "unknown-effect", conversationId: null }, { conversationExists: null }, ["mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["update", { kind: "package-update", conversationId: null, data: { version: "2.0.0" }, source: "package:p" }, { conversationExists: null, installedVersion: "1.0.0", listed: true }, ["update", "skip-version", "review-update", "mark-read", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["update already current", { kind: "package-update", conversationId: null, data: { version: "2.0.0" }, source: "package:p", suppressed: true }, { conversationExists: null, installedVersion: "2.0.0", listed: true }, ["update:already-current", "skip-version", "review-update:already-current", "mark-read", "snooze", "unsuppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["update not listed", { kind: "package-update", conversationId: null, data: { version: "2.0.0" } }, { conversationExists: null, installedVersion: "1.0.0", listed: false }, ["update:package-gone", "skip-version", "review-update:package-gone", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["engine", { kind: "engine-update", conversationId: null, source: "pi:engine" }, { conversationExists: null }, ["dismiss", "skip-version"]],
    ["expired task approval", { kind: "task-approval-expired" }, { conversationExists: true, packageCurrent: true }, ["ask-again", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["expired task approval, package reinstalled", { kind: "task-approval-expired" }, { conversationExists: true, packageCurrent: false }, ["ask-again:package-gone", "open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["expired task approval, conversation deleted", { kind: "task-approval-expired" }, { conversationExists: false, packageCurrent: true }, ["ask-again:conversation-gone", "open:conversation-gone", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["expired task approval asked again", { kind: "task-approval-expired", data: { askedAgainAs: "tap_2" } }, { conversationExists: true, packageCurrent: true }, ["open", "mark-read", "snooze", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["job ended", { kind: "job-ended", subjectId: "job_1", source: "job:p/t" }, { conversationExists: true }, ["open", "mark-read", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["job ended, its capability suppressed", { kind: "job-ended", subjectId: "job_1", source: "job:p/t", suppressed: true }, { conversationExists: true }, ["open", "mark-read", "snooze", "unsuppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["job failed: no retry", { kind: "job-failed", subjectId: "job_1", source: "job:p/t" }, { conversationExists: true }, ["open", "mark-read", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["job failed, read, conversation gone", { kind: "job-failed", subjectId: "job_1", source: "job:p/t", readAt: "2026-01-01T00:30:00.000Z" }, { conversationExists: false }, ["open:conversation-gone", "mark-unread", "snooze", "suppress", "dismiss", "ask-clark", "add-to-context", "copy-details"]],
    ["job ended, dismissed", { kind: "job-ended", subjectId: "job_1", source: "job:p/t", dismissedAt: "2026-01-01T00:59:00.000Z" }, { conversationExists: true }, ["restore"]]
  ])("%s", (_, patch, facts, expected) => {
    expect(names(offeredActions({ ...base, ...patch }, facts, now))).toEqual(expected)
  })
})

describe("classifyAction and rawActionOf", () => {
  it.each([
    ["dismiss", "Notice"],
    ["ask-again", "Notice"],
    ["open", "Surface"],
    ["copy-details", "Surface"],
    ["reconcile-failed", "OwnRoute"],
    ["%64ismiss", "Unknown"],
    ["Dismiss", "Unknown"],
    ["", "Unknown"]
  ])("%s is %s", (name, tag) => expect(classifyAction(name)._tag).toBe(tag))

  it.each([
    ["/inbox/notices/n/actions/%64ismiss", "%64ismiss"],
    ["/inbox/notices/n/actions/dismiss?x=1", "dismiss"],
    ["http://127.0.0.1:1/inbox/notices/a%2Factions%2Fx/actions/mark-read#f", "mark-read"],
    ["/inbox/notices/n/other", ""]
  ])("%s → %s", (url, raw) => expect(rawActionOf(url)).toBe(raw))
})

describe("windows", () => {
  it.each<[string | undefined, string]>([
    [undefined, "missing"],
    ["2026-01-01T00:59:59Z", "past"],
    ["2026-01-01T01:00:00Z", "past"],
    ["2026-01-31T01:00:01Z", "too-far"]
  ])("snooze until %s is %s", (until, problem) => expect(checkSnooze(until, now)).toEqual({ _tag: "Invalid", problem }))

  it("accepts exactly 30 days ahead, stored as UTC", () =>
    expect(checkSnooze("2026-01-31T02:00:00+01:00", now)).toEqual({ _tag: "Ok", until: "2026-01-31T01:00:00.000Z" }))

  it.each([[0, true], [5 * 60 * 1000, true], [5 * 60 * 1000 + 1, false]])("restore %i ms after dismiss: %s", (ms, ok) =>
    expect(canRestore(new Date(now - ms).toISOString(), now)).toBe(ok))
})

describe("versions", () => {
  it.each([
    ["1.0.0", "1.0.0", 0],
    ["1.0.1", "1.0.0", 1],
    ["1.10.0", "1.9.0", 1],
    ["2.0.0-beta.1", "2.0.0", -1],
    ["2.0.0-beta.2", "2.0.0-beta.10", -1],
    ["2.0.0-alpha", "2.0.0-beta", -1],
    ["1.0.0+build", "1.0.0", 0]
  ])("%s vs %s", (a, b, order) => expect(compareVersions(a, b)).toBe(order))

  it("a skipped version hides itself and older ones", () => {
    expect(isSkipped("1.9.0", ["2.0.0"])).toBe(true)
    expect(isSkipped("2.0.0", ["2.0.0"])).toBe(true)
    expect(isSkipped("2.0.1", ["2.0.0"])).toBe(false)
  })
})

describe("job notices", () => {
  it.each([
    ["completed", "job-ended", "A background job finished"],
    ["cancelled", "job-ended", "A background job was cancelled"],
    ["failed", "job-failed", "A background job failed"]
  ])("a job %s writes %s, titled %j, its body the sentence naming its files", (status, kind, title) => {
    expect(jobNoticeKind(status)).toBe(kind)
    const text = "The background job tide_report finished. Result files: a.csv, b.csv, c.csv and 1 more."
    expect(wordsOf(kind, { status, text })).toEqual({ title, body: text })
  })
})
