/**
 * The rules of notices (spec, "Notice (inbox item)", "Dismissed notice" and the notice-action table) as pure
 * functions: which actions a notice offers at read time and why one cannot be taken, how an action name from
 * the raw path is classified, the snooze horizon, the undo window and the order of package versions. The
 * notice store, the inbox and their layers apply them; their table tests are in test/node/inbox/Rules.test.ts.
 */
import type { NoticeAction, SurfaceAction, Unavailable } from "../../schema/node/Inbox.js"
import { noticeActions, ownRouteActions, surfaceActions } from "../../schema/node/Inbox.js"

/**
 * The kinds of notice the node writes. Jobs write `job-ended` (completed or cancelled) and `job-failed` through
 * `Inbox.notify`, with `source` naming their capability (`job:<package>/<tool>`) so suppress silences it.
 */
export type NoticeKind =
  | "question-expired"
  | "unknown-effect"
  | "install-approval-expired"
  | "task-approval-expired"
  | "work-failed"
  | "package-update"
  | "engine-update"
  | "job-ended"
  | "job-failed"

/** The notice kind a job's end writes: a failure is told apart so the inbox can show it as one. */
export const jobNoticeKind = (status: string): NoticeKind => (status === "failed" ? "job-failed" : "job-ended")

/** A notice as stored, with what the person did to it. */
export interface NoticeRecord {
  readonly id: string
  readonly kind: string
  readonly conversationId: string | null
  readonly subjectId: string | null
  readonly data: Readonly<Record<string, unknown>>
  readonly createdAt: string
  readonly readAt: string | null
  readonly dismissedAt: string | null
  readonly snoozedUntil: string | null
  readonly source: string | null
  readonly suppressed: boolean
  readonly busySince: string | null
}

/** What the node knows at read time about what a notice points at. */
export interface NoticeFacts {
  /** Null when the notice names no conversation. */
  readonly conversationExists: boolean | null
  /** Work-failed notices: whether the work is still known. */
  readonly workExists?: boolean | undefined
  /** Package updates: the installed version (null when not installed) and whether the directory still lists it. */
  readonly installedVersion?: string | null | undefined
  readonly listed?: boolean | undefined
  /** Expired task approvals: whether the package is still installed with the bytes the approval named. */
  readonly packageCurrent?: boolean | undefined
}

export interface Offered {
  readonly action: NoticeAction | SurfaceAction
  readonly unavailable?: Unavailable
}

/** Restore works this long after dismiss. */
export const undoWindowMillis = 5 * 60 * 1000
/** Snooze reaches at most this far ahead. */
export const snoozeHorizonMillis = 30 * 24 * 60 * 60 * 1000
/** An update claimed longer ago than this is taken as cut off (a crash mid-install), not as still installing. */
export const busyLeaseMillis = 10 * 60 * 1000

// ---------------------------------------------------------------------------
// Versions

const parts = (version: string) => {
  const [main = "", pre] = version.split("+")[0]!.split(/-(.*)/s, 2)
  return { main: main.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : Number.NaN)), pre: pre ?? null }
}

/** Semantic-version order (build metadata ignored; a pre-release sorts before its release); text order otherwise. */
export const compareVersions = (a: string, b: string): number => {
  const x = parts(a)
  const y = parts(b)
  if (x.main.some(Number.isNaN) || y.main.some(Number.isNaN)) return a < b ? -1 : a > b ? 1 : 0
  for (let i = 0; i < Math.max(x.main.length, y.main.length); i++) {
    const d = (x.main[i] ?? 0) - (y.main[i] ?? 0)
    if (d !== 0) return Math.sign(d)
  }
  if (x.pre === y.pre) return 0
  if (x.pre === null) return 1
  if (y.pre === null) return -1
  const xs = x.pre.split(".")
  const ys = y.pre.split(".")
  for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
    const p = xs[i]
    const q = ys[i]
    if (p === undefined) return -1
    if (q === undefined) return 1
    if (p === q) continue
    const pn = /^\d+$/.test(p)
    const qn = /^\d+$/.test(q)
    if (pn && qn) return Math.sign(Number(p) - Number(q))
    if (pn) return -1
    if (qn) return 1
    return p < q ? -1 : 1
  }
  return 0
}

// ---------------------------------------------------------------------------
// The engine's versions

/**
 * The assistant engine's versions as the host application passes them at launch (CC_ENGINE_VERSION and
 * CC_ENGINE_NEWEST): the one it runs, and the newest its release channel knows, which arrives with the next
 * application release. The node itself never downloads an engine.
 */
export interface EngineVersions {
  readonly running: string
  readonly newest: string
}

/** The name of the engine in skipped versions (`kind: pi`) and on its notices. */
export const engineName = "engine"

/** A version as the engine's settings take it: semantic, `1.2.3` with an optional pre-release. */
export const isEngineVersion = (text: string) => /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:-[0-9A-Za-z.-]{1,64})?$/.test(text)

/** The notice a launch with these versions calls for: one per newer version, none when it runs the newest. */
export const engineUpdateOf = (engine: EngineVersions | null) =>
  engine === null || compareVersions(engine.newest, engine.running) <= 0 ? null : {
    kind: "engine-update",
    conversationId: null,
    subjectId: `${engineName}@${engine.newest}`,
    data: { name: engineName, version: engine.newest, runningVersion: engine.running },
    source: "pi:engine"
  }

/** A version is hidden once it, or a newer one, of the same package was skipped. */
export const isSkipped = (version: string, skipped: ReadonlyArray<string>) =>
  skipped.some((s) => compareVersions(s, version) >= 0)

// ---------------------------------------------------------------------------
// Actions a notice offers

const isSnoozed = (notice: NoticeRecord, now: number) =>
  notice.snoozedUntil !== null && Date.parse(notice.snoozedUntil) > now

/** Kind-specific actions, each with why it cannot be taken now (or nothing when it can). */
type KindRule = (notice: NoticeRecord, facts: NoticeFacts) => ReadonlyArray<Offered>

const conversationGone = (facts: NoticeFacts): Unavailable | undefined =>
  facts.conversationExists === false ? "conversation-gone" : undefined

const offer = (action: Offered["action"], unavailable: Unavailable | undefined): Offered =>
  unavailable === undefined ? { action } : { action, unavailable }

const kindRules: Record<string, KindRule> = {
  "question-expired": (_, facts) => [offer("ask-again", conversationGone(facts))],
  "unknown-effect": () => [],
  "install-approval-expired": () => [],
  // Ask-again asks the same operation anew, once: after that the new approval waits in the inbox itself.
  "task-approval-expired": (notice, facts) =>
    typeof notice.data.askedAgainAs === "string"
      ? []
      : [offer("ask-again", conversationGone(facts) ?? (facts.packageCurrent === false ? "package-gone" : undefined))],
  // A job's end offers no action of its own: the generic ones (open the conversation, mark read, snooze,
  // suppress its capability, dismiss, and the app's ask-clark / add-to-context / copy-details). No retry for a
  // failed job: a job starts only from its widget's button, whose press checks the instance, revision, binding,
  // rate, policy and ledger; a rerun from the inbox would skip them all (docs/decisions.md, "Job notices").
  "job-ended": () => [],
  "job-failed": () => [],
  "work-failed": (_, facts) => [
    offer("retry", conversationGone(facts) ?? (facts.workExists === false ? "work-gone" : undefined))
  ],
  "package-update": (notice, facts) => {
    const version = typeof notice.data.version === "string" ? notice.data.version : ""
    const unavailable: Unavailable | undefined = facts.listed === false || facts.installedVersion === null
      ? "package-gone"
      : facts.installedVersion !== undefined && compareVersions(facts.installedVersion, version) >= 0
      ? "already-current"
      : undefined
    return [offer("update", unavailable), { action: "skip-version" }, offer("review-update", unavailable)]
  }
}

/** Which kinds are updates (skip-version, unskip-version). */
export const updateKinds: ReadonlySet<string> = new Set(["package-update", "engine-update"])

/**
 * The actions a notice offers at read time, in the order the app shows them. A dismissed notice offers only
 * restore. A notice of a newer engine offers only Dismiss and Skip this version (no Ask, no open).
 */
export const offeredActions = (notice: NoticeRecord, facts: NoticeFacts, now: number): ReadonlyArray<Offered> => {
  if (notice.dismissedAt !== null) return [{ action: "restore" }]
  if (notice.kind === "engine-update") return [{ action: "dismiss" }, { action: "skip-version" }]
  const own = (kindRules[notice.kind] ?? (() => []))(notice, facts)
  const gone = conversationGone(facts)
  return [
    ...own,
    ...(notice.conversationId === null ? [] : [offer("open", gone)]),
    { action: notice.readAt === null ? "mark-read" : "mark-unread" },
    isSnoozed(notice, now) ? { action: "unsnooze" } : { action: "snooze" },
    ...(notice.source === null ? [] : [{ action: notice.suppressed ? "unsuppress" : "suppress" } as const]),
    { action: "dismiss" },
    { action: "ask-clark" },
    { action: "add-to-context" },
    { action: "copy-details" }
  ]
}

// ---------------------------------------------------------------------------
// The action name, as written in the raw path

export type ActionName =
  | { readonly _tag: "Notice"; readonly action: NoticeAction }
  | { readonly _tag: "Surface"; readonly action: string }
  | { readonly _tag: "OwnRoute"; readonly action: string }
  | { readonly _tag: "Unknown" }

const noticeSet: ReadonlySet<string> = new Set(noticeActions)
const surfaceSet: ReadonlySet<string> = new Set(surfaceActions)
const ownRouteSet: ReadonlySet<string> = new Set(ownRouteActions)

/** Classifies the name exactly as written: `%64ismiss` is no action, whatever it decodes to. */
export const classifyAction = (raw: string): ActionName =>
  noticeSet.has(raw)
    ? { _tag: "Notice", action: raw as NoticeAction }
    : surfaceSet.has(raw)
    ? { _tag: "Surface", action: raw }
    : ownRouteSet.has(raw)
    ? { _tag: "OwnRoute", action: raw }
    : { _tag: "Unknown" }

/**
 * The last path segment after `/actions/` of a request URL, undecoded: the router hands handlers decoded
 * parameters, so the route reads the raw URL itself.
 */
export const rawActionOf = (url: string): string => {
  const pathOnly = url.replace(/^[a-z]+:\/\/[^/]*/i, "").split(/[?#]/, 1)[0]!
  const at = pathOnly.lastIndexOf("/actions/")
  return at < 0 ? "" : pathOnly.slice(at + "/actions/".length)
}

// ---------------------------------------------------------------------------
// Windows

export type SnoozeCheck =
  | { readonly _tag: "Ok"; readonly until: string }
  | { readonly _tag: "Invalid"; readonly problem: "missing" | "past" | "too-far" }

/** `until` must lie ahead, at most 30 days; it is stored as a UTC instant. */
export const checkSnooze = (until: string | undefined, now: number): SnoozeCheck => {
  if (until === undefined) return { _tag: "Invalid", problem: "missing" }
  const at = Date.parse(until)
  if (at <= now) return { _tag: "Invalid", problem: "past" }
  if (at - now > snoozeHorizonMillis) return { _tag: "Invalid", problem: "too-far" }
  return { _tag: "Ok", until: new Date(at).toISOString() }
}

/** Restore is open for five minutes after the dismissal, the fifth minute included. */
export const canRestore = (dismissedAt: string, now: number) => now - Date.parse(dismissedAt) <= undoWindowMillis

/** An update claim that is not cut off. */
export const isBusy = (busySince: string | null, now: number) =>
  busySince !== null && now - Date.parse(busySince) < busyLeaseMillis

// ---------------------------------------------------------------------------
// Words

const text = (data: Readonly<Record<string, unknown>>, key: string, fallback: string) =>
  typeof data[key] === "string" ? (data[key] as string) : fallback

/** The title and body the app shows; what a notice quotes (a question, a summary) stays in `body`, as data. */
export const wordsOf = (kind: string, data: Readonly<Record<string, unknown>>): { title: string; body: string } => {
  switch (kind) {
    case "question-expired":
      return { title: "A question expired unanswered", body: text(data, "question", "") }
    case "unknown-effect":
      return { title: "Did this take effect?", body: text(data, "summary", "") }
    case "install-approval-expired":
      return {
        title: "An install approval expired",
        body: `${text(data, "packageId", "A package")} ${text(data, "version", "")} was not installed.`.replace(/\s+\./, ".")
      }
    case "task-approval-expired":
      return { title: "An approval expired", body: `${text(data, "summary", "A step")} was not run.` }
    case "work-failed":
      return { title: "Background work did not finish", body: text(data, "note", "") }
    case "job-ended": {
      const status = text(data, "status", "")
      const title = status === "completed"
        ? "A background job finished"
        : status === "cancelled"
        ? "A background job was cancelled"
        : "A background job failed"
      return { title, body: text(data, "text", "") }
    }
    case "package-update":
      return { title: "A package update is available", body: `${text(data, "name", "")} ${text(data, "version", "")}`.trim() }
    case "job-failed":
      return { title: "A background job failed", body: text(data, "text", "") }
    case "engine-update":
      return {
        title: "A newer assistant engine is available",
        body: `Version ${text(data, "version", "")} arrives with the next application release.`
      }
    default:
      return { title: text(data, "title", kind.replaceAll("-", " ")), body: text(data, "body", "") }
  }
}
