/**
 * The node's one mapping from domain errors to the wire: each domain error
 * (services/node/*Errors.ts) becomes `{code, message, ...members}` with the
 * status the spec's Errors table gives its code. Services and layers raise
 * what happened; only this module knows codes and statuses.
 *
 * Messages are English, for logs: they quote client input only as a short
 * prefix (`quote`) and never a secret; the members carry what a client acts on.
 */
import { Effect, Match } from "effect"
import type { NodeError } from "../../../schema/node/Errors.js"
import type { OfflineReason } from "../../../schema/node/Maps.js"
import type { AccessError } from "../../../services/node/AccessErrors.js"
import type { ArtifactError } from "../../../services/node/ArtifactErrors.js"
import type { ThemeNotAvailable } from "../../../services/node/AppIntentErrors.js"
import type { ConversationError } from "../../../services/node/ConversationErrors.js"
import type { ConnectionStartError, CredentialNameProblem } from "../../../services/node/CredentialErrors.js"
import type { DeletionError } from "../../../services/node/DeletionErrors.js"
import { boundsProblem } from "../../../services/node/MapTiles.js"
import type { InboxError } from "../../../services/node/InboxErrors.js"
import type { JobError } from "../../../services/node/JobErrors.js"
import type { LedgerError } from "../../../services/node/LedgerErrors.js"
import type { ApprovalError } from "../../../services/node/PackageErrors.js"
import type { NotImplementedYet } from "../../../services/node/PendingErrors.js"
import type { ServiceCallError } from "../../../services/node/ServiceErrors.js"
import type { PreferenceInvalid } from "../../../services/node/PreferenceErrors.js"
import type { SecretError } from "../../../services/node/SecretErrors.js"
import type { ExportRefused } from "../../../services/node/TableExport.js"
import type { TileError } from "../../../services/node/TileErrors.js"
import type { WidgetError } from "../../../services/node/WidgetErrors.js"
import type { OfferedActionError } from "../../../services/node/OfferedActionErrors.js"
import { offeredActionMapping } from "./errors/OfferedActions.js"
import {
  pressFailures,
  pressInputMessages,
  pressSchemaMessages,
  pressUnsupportedMessages,
  writeProblemFields,
  writeProblemMessages
} from "./RefusalMessages.js"
import { fileWriteRefusals } from "./errors/FileWrites.js"
import { packageRefusals } from "./errors/Packages.js"
import { quote, refuse } from "./errors/Refuse.js"

export { quote, quotedLength } from "./errors/Refuse.js"

/** Every domain error a node route can fail with. */
export type NodeDomainError =
  | ConversationError
  | AccessError
  | TileError
  | SecretError
  | PreferenceInvalid
  | DeletionError
  | ThemeNotAvailable
  | ApprovalError
  | ServiceCallError
  | LedgerError
  | ConnectionStartError
  | ArtifactError
  | InboxError
  | JobError
  | ExportRefused
  | NotImplementedYet
  | WidgetError
  | OfferedActionError

const offlineMessages: Record<OfflineReason, string> = {
  "no-provider": "No tile provider is set",
  "key-unavailable": "The tile provider needs a key and none is stored",
  "key-origin-mismatch": "The stored map tile key is bound to another origin"
}

const credentialNameMessages: Record<typeof CredentialNameProblem.Type, string> = {
  characters: "must be a letter followed by letters, digits, '_', '-', '.' or ':'",
  length: "must be 1 to 53 characters"
}

/** Which field of the answer a refused answer is about. */
const answerFields = { "text-not-allowed": "text", "unknown-option": "optionIds", empty: null } as const
const answerMessages = {
  "text-not-allowed": "This question takes one of its options, not text",
  "unknown-option": "optionIds names an option the question does not offer",
  empty: "The answer is empty"
} as const



type Mapping = { readonly [Tag in NodeDomainError["_tag"]]: (error: Extract<NodeDomainError, { readonly _tag: Tag }>) => NodeError }

/** One entry per domain error: the compiler refuses a domain error left unmapped. */
const mapping: Mapping = {
  ...fileWriteRefusals,
  // Conversations, turns, questions, host-controls
  ConversationNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No conversation ${quote(e.conversationId)}`),
  TurnNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No turn ${quote(e.taskId)} in this conversation`),
  LastEventIdInvalid: (e) =>
    refuse("INVALID_INPUT", `Last-Event-ID ${quote(e.given)} is not an event id this node wrote`, {
      field: "last-event-id"
    }),
  ReferenceNotAvailable: (e) =>
    refuse("REFERENCE_NOT_AVAILABLE", `The ${e.reference.kind} reference ${quote(e.reference.id)} is not available`, {
      reference: { kind: e.reference.kind, id: e.reference.id }
    }),
  QuestionNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No question ${quote(e.questionId)} in this conversation`),
  QuestionClosed: (e) =>
    refuse("QUESTION_CLOSED", `The question ${quote(e.questionId)} is ${e.status}`, { status: e.status }),
  QuestionOpen: (e) => refuse("QUESTION_OPEN", `The question ${quote(e.questionId)} is still waiting`),
  AlreadyAskedAgain: (e) =>
    refuse("ALREADY_ASKED_AGAIN", `The question ${quote(e.questionId)} was asked again`, {
      askedAgainAs: e.askedAgainAs
    }),
  AnswerInvalid: (e) =>
    refuse("INVALID_INPUT", answerMessages[e.reason], { field: answerFields[e.reason], reason: e.reason }),
  HostControlNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No host-control ${quote(e.controlId)}`),
  HostControlAnswered: (e) =>
    refuse("HOST_CONTROL_ANSWERED", `The host-control ${quote(e.controlId)} was already answered`),
  // Who is asking
  Unauthenticated: () => refuse("UNAUTHENTICATED", "A valid local token is required"),
  PersonOnlyRefused: (e) =>
    refuse("PERSON_ONLY", "Only the person can do this, from the app's own pages", { surface: e.surface }),
  // Map tiles
  TilesOff: () => refuse("MAP_TILES_OFF", "No tile provider is set"),
  TileOutOfBounds: (e) =>
    refuse("MAP_TILE_OUT_OF_BOUNDS", `Tile out of bounds: ${boundsProblem(e.maxZoom, e.z, e.x, e.y) ?? "off the grid"}`, {
      z: e.z,
      x: e.x,
      y: e.y,
      maxZoom: e.maxZoom
    }),
  TilesRateLimited: (e) =>
    refuse(
      "MAP_TILES_RATE_LIMITED",
      `Map tiles are limited to ${e.perSecond} a second (burst ${e.burst}); retry after ${e.retryAfterSeconds} s`,
      { retryAfterSeconds: e.retryAfterSeconds }
    ),
  TileKeyUnavailable: (e) =>
    e.offline === undefined
      ? refuse("MAP_TILE_KEY_UNAVAILABLE", "The map tile key could not be read")
      : refuse("MAP_TILE_KEY_UNAVAILABLE", offlineMessages[e.offline], { offline: e.offline }),
  TileMissing: (e) => refuse("MAP_TILE_MISSING", e.reason),
  TileFetchFailed: (e) => refuse("MAP_TILE_FAILED", e.reason),
  TileRefused: (e) => refuse("MAP_TILE_REFUSED", e.reason),
  // Secrets: the only secret a route reads or writes today is the map tile key.
  SecretStoreUnavailable: () => refuse("MAP_TILE_KEY_UNAVAILABLE", "The node's secret store cannot be used"),
  SecretNameReserved: () =>
    refuse("INVALID_INPUT", "The map tile key is managed through /map-tiles/key, not /credentials", {
      field: "name",
      reason: "reserved-name"
    }),
  // Package credentials and connections (docs/decisions.md, "Package credentials"); never a value, code or state.
  CredentialNameInvalid: (e) =>
    refuse("INVALID_INPUT", `The credential name ${quote(e.name)} ${credentialNameMessages[e.problem]}`, {
      field: "name",
      reason: `name-${e.problem}`
    }),
  PackageNotInstalled: (e) =>
    refuse("RESOURCE_NOT_FOUND", `No package ${quote(e.packageId)} is installed`),
  TileKeyConsumer: () =>
    refuse(
      "INVALID_INPUT",
      "The package declares itself a consumer of the map tile key: its key is managed through /map-tiles/key",
      { field: "packageId", reason: "maps-tiles-consumer" }
    ),
  CredentialStoreUnavailable: () =>
    refuse("SECRET_STORE_UNAVAILABLE", "The node's secret store cannot be used; nothing was stored"),
  CallbackHostInvalid: () =>
    refuse("INVALID_INPUT", "The request's Host is not an address a callback can be sent to", { field: "host" }),
  // Preferences
  PreferenceInvalid: (e) =>
    refuse("PREFERENCE_INVALID", `The value does not fit ${e.key}`, { key: e.key, problem: e.problem }),
  // Deletion: the spec's refusal body, with the code beside it
  DeletionRefused: (e) =>
    refuse("CONVERSATION_BUSY", "The conversation cannot be deleted now", {
      deleted: false,
      decision: { kind: "refused", say: e.say }
    }),
  DeletionPermitInvalid: (e) =>
    refuse("DELETION_PERMIT_INVALID", `The deletion permit cannot be used (${e.reason}); nothing was deleted`, {
      deleted: false,
      decision: { kind: "refused", say: e.say },
      reason: e.reason
    }),
  // App intents: a theme that cannot be drawn, under its own THEME_* code
  ThemeNotAvailable: (e) => refuse(e.code, `The theme ${quote(e.themeRef)} cannot be used: ${e.reason}; nothing was stored`),
  ConfirmationNotFound: () =>
    refuse("RESOURCE_NOT_FOUND", "No confirmation is waiting under that token (never issued, answered or expired)"),
  ...packageRefusals,
  // Service packages (docs/decisions.md, "Service runtime"); `detail` stays in the log, never on the wire.
  ServiceUnreachable: (e) => refuse("SERVICE_UNREACHABLE", `The package's service could not be reached (${e.reason})`),
  ServiceToolFailed: (e) => refuse("SERVICE_TOOL_FAILED", `The tool ${quote(e.tool)} failed (${e.reason})`),
  ServiceTimedOut: (e) => refuse("SERVICE_TIMED_OUT", `The tool ${quote(e.tool)} did not answer within ${e.timeoutMillis} ms`),
  ServiceCancelled: (e) => refuse("SERVICE_CANCELLED", `The call of ${quote(e.tool)} was cancelled (${e.by})`),
  ServiceToolNotOffered: (e) => refuse("RESOURCE_NOT_FOUND", `The package offers no tool ${quote(e.tool)}`),
  // The effect ledger (docs/decisions.md, "Effect ledger"); `detail` is the database's words, for the log only.
  LedgerUnavailable: () => refuse("LEDGER_UNAVAILABLE", "The effect ledger cannot be written; nothing was sent"),
  EffectNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No effect ${quote(e.effectId)} on this node`),
  EffectNotUnknown: (e) =>
    refuse("EFFECT_NOT_UNKNOWN", `The effect ${quote(e.effectId)} is not waiting for an answer (${e.status})`, {
      status: e.status
    }),
  // Widget files (docs/decisions.md, "Artifacts")
  ArtifactNotFound: (e) => refuse("ARTIFACT_NOT_FOUND", `No artifact ${quote(e.artifactId)} for this caller`),
  ArtifactNotFinalized: (e) => refuse("ARTIFACT_NOT_FINALIZED", `The artifact ${quote(e.artifactId)} is still being written`),
  ArtifactNotCreator: (e) => refuse("ARTIFACT_NOT_CREATOR", `The artifact ${quote(e.artifactId)} was not made by this widget`),
  ArtifactStorageFull: (e) =>
    refuse(
      "ARTIFACT_INSTANCE_QUOTA_EXCEEDED",
      e.scope === "instance"
        ? `The widget's own files may hold at most ${e.limitBytes} bytes`
        : `All conversation artifacts together may hold at most ${e.limitBytes} bytes`,
      { scope: e.scope, limitBytes: e.limitBytes }
    ),
  ArtifactWriteRefused: (e) =>
    refuse("INVALID_INPUT", writeProblemMessages[e.problem](e), {
      field: writeProblemFields[e.problem],
      reason: e.problem,
      ...(e.sizeBytes === undefined ? {} : { sizeBytes: e.sizeBytes }),
      ...(e.limitBytes === undefined ? {} : { limitBytes: e.limitBytes })
    }),
  InstanceUnknown: (e) => refuse("INSTANCE_UNKNOWN", `No widget ${quote(e.instanceId)} in this conversation`),
  FileWriteRefused: (e) =>
    refuse(
      "POLICY_REFUSED",
      e.reason === "deny-rule"
        ? `A deny rule of the execution policy refuses ${e.operation}; nothing was written`
        : `The execution policy asks the person before ${e.operation} from this surface; nothing was written`,
      { reason: e.reason }
    ),
  // The inbox and background work (docs/decisions.md, "Inbox and background work")
  UnknownNoticeAction: (e) =>
    refuse("UNKNOWN_ACTION", `${quote(e.given)} is not a notice action (names are read as written, never decoded)`),
  SurfaceOnlyAction: (e) => refuse("SURFACE_ACTION", `${quote(e.action)} is done by the app itself`, { action: e.action }),
  NoticeNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No notice ${quote(e.noticeId)}`),
  ActionNotOffered: (e) => refuse("ACTION_NOT_OFFERED", `The notice does not offer ${e.action} now`, { action: e.action }),
  ActionUnavailable: (e) =>
    refuse("ACTION_UNAVAILABLE", `The notice lists ${e.action}, but it cannot be taken (${e.reason})`, {
      action: e.action,
      unavailable: e.reason
    }),
  ActionInProgress: (e) => refuse("ACTION_IN_PROGRESS", `The notice's ${e.action} is already under way`, { action: e.action }),
  UndoExpired: (e) =>
    refuse("UNDO_EXPIRED", "A dismissed notice can be restored for five minutes only", { dismissedAt: e.dismissedAt }),
  SnoozeInvalid: (e) =>
    refuse("INVALID_INPUT", {
      missing: "snooze needs until, an ISO instant",
      past: "until must lie ahead",
      "too-far": "until must be at most 30 days ahead"
    }[e.problem], { field: "until", reason: e.problem }),
  NotAnUpdate: (e) => refuse("NOT_AN_UPDATE", `The notice is not an update (${e.kind})`),
  SkippedVersionNotFound: (e) =>
    refuse("RESOURCE_NOT_FOUND", `No skipped version ${quote(`${e.kind}/${e.name}@${e.version}`)}`),
  WorkNotFound: (e) => refuse("RESOURCE_NOT_FOUND", `No work ${quote(e.workId)}`),
  AlreadyRetried: (e) => refuse("ALREADY_RETRIED", "This work was already retried", { retriedAs: e.retriedAs }),
  WorkNotRetryable: (e) =>
    refuse("WORK_NOT_RETRYABLE", `Only failed, stopped or cut-off work can be retried (this is ${e.status})`, {
      status: e.status
    }),
  BackgroundBusy: (e) =>
    refuse("BACKGROUND_BUSY", "The node cannot take this work now; it stays retryable", { reason: e.reason }),
  WorkNotRunning: (e) => refuse("JOB_NOT_RUNNING", `The work is not running (${e.status})`, { status: e.status }),
  // Widgets (docs/decisions.md, "Widget presses")
  WidgetNotInstalled: (e) =>
    refuse("NOT_INSTALLED", `The package ${quote(e.packageId)} is not installed as this widget was placed from; reinstall it`),
  NoFrame: () =>
    refuse("UNSUPPORTED_ACTION", "A host-held player is drawn by the app itself; it has no frame", { reason: "host-drawn" }),
  PressSchemaInvalid: (e) => refuse("INVALID_SCHEMA", pressSchemaMessages[e.reason], { reason: e.reason }),
  PressUnsupported: (e) =>
    refuse("UNSUPPORTED_ACTION", pressUnsupportedMessages[e.reason], { reason: e.reason, actionBindingId: e.actionBindingId }),
  PressInputInvalid: (e) =>
    refuse("INVALID_INPUT", e.problem === undefined ? pressInputMessages[e.reason] : `${pressInputMessages[e.reason]}: ${e.problem}`, {
      field: e.field,
      reason: e.reason
    }),
  PressRateLimited: (e) =>
    refuse("RATE_LIMITED", `This action takes at most ${e.limit} presses a minute`, {
      outcome: "refused",
      mayHaveRun: false,
      recorded: false,
      limit: e.limit,
      retryAfterMs: e.retryAfterMs
    }),
  PressInterrupted: () =>
    refuse("ACTION_INTERRUPTED", "The press was cut off by a restart of the node; whether it ran is not known", {
      outcome: "uncertain",
      mayHaveRun: true,
      recorded: false
    }),
  PressFailed: (e) =>
    refuse(pressFailures[e.failure].code, pressFailures[e.failure].message, {
      outcome: e.outcome,
      mayHaveRun: e.mayHaveRun,
      recorded: e.recorded,
      workflow: e.workflow,
      ...(e.readOnly === undefined ? {} : { readOnly: e.readOnly }),
      ...(e.taskId === undefined ? {} : { taskId: e.taskId }),
      ...(e.effectId === undefined ? {} : { effectId: e.effectId })
    }),
  // Jobs and table export
  JobNotFound: (e) => refuse("JOB_NOT_FOUND", `No job ${quote(e.jobId)} for this widget`),
  JobNotRunning: (e) => refuse("JOB_NOT_RUNNING", `The job already ended (${e.status})`, { jobId: e.jobId, status: e.status }),
  JobUnavailable: (e) => refuse("JOB_UNAVAILABLE", "The node cannot run this job now", { reason: e.reason }),
  WidgetNotHere: (e) => refuse("INSTANCE_UNKNOWN", `No widget ${quote(e.instanceId)} in this conversation`),
  ExportRefused: (e) =>
    refuse(
      "INVALID_INPUT",
      e.reason === "not-a-table" ? "This widget holds no table to export" : `The table shows no column ${quote(e.column ?? "")}`,
      { reason: e.reason, ...(e.field === undefined ? {} : { field: e.field }) }
    ),
  // Routes declared and not built yet
  NotImplementedYet: (e) => refuse("NOT_IMPLEMENTED", `Not implemented yet: ${e.feature}`),
  ...offeredActionMapping
}

/** The wire error of a domain error: its code, status (`.status`), message and members. */
export const toNodeError = (error: NodeDomainError): NodeError => Match.valueTags(error, mapping)

/**
 * For handlers: a service call's domain errors become the route's wire
 * errors. `engine.cancelQuestion(id, q).pipe(wire)`.
 */
export const wire = <A, E extends NodeDomainError, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, NodeError, R> =>
  Effect.mapError(effect, toNodeError)

/** For handlers written as functions: `handle("cancel", wired(({ path }) => engine.cancelQuestion(...)))`. */
export const wired = <Args extends ReadonlyArray<unknown>, A, E extends NodeDomainError, R>(
  handler: (...args: Args) => Effect.Effect<A, E, R>
) =>
(...args: Args): Effect.Effect<A, NodeError, R> => wire(handler(...args))
