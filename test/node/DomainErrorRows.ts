/**
 * One row per node domain error for DomainErrors.test.ts: the error, and the
 * status, code and members src/node/http/Errors.ts must map it to.
 */
import { PersonOnlyRefused, Unauthenticated } from "../../services/node/AccessErrors.js"
import {
  ArtifactNotCreator,
  ArtifactNotFinalized,
  ArtifactNotFound,
  ArtifactStorageFull,
  ArtifactWriteRefused,
  ApprovalsPending,
  FileWriteRefused
} from "../../services/node/ArtifactErrors.js"
import {
  AlreadyAskedAgain,
  AnswerInvalid,
  ConversationNotFound,
  HostControlAnswered,
  HostControlNotFound,
  LastEventIdInvalid,
  QuestionClosed,
  QuestionNotFound,
  QuestionOpen,
  ReferenceNotAvailable,
  TurnNotFound
} from "../../services/node/ConversationErrors.js"
import {
  CallbackHostInvalid,
  CredentialNameInvalid,
  CredentialStoreUnavailable,
  PackageNotInstalled,
  TileKeyConsumer
} from "../../services/node/CredentialErrors.js"
import { ThemeNotAvailable } from "../../services/node/AppIntentErrors.js"
import { ConfirmationNotFound, DeletionPermitInvalid, DeletionRefused } from "../../services/node/DeletionErrors.js"
import {
  InstanceUnknown,
  NoFrame,
  PressFailed,
  PressInputInvalid,
  PressInterrupted,
  PressRateLimited,
  PressSchemaInvalid,
  PressUnsupported,
  WidgetNotInstalled
} from "../../services/node/WidgetErrors.js"
import {
  ApprovalAlreadyDecided,
  ApprovalExpired,
  ApprovalForged,
  ApprovalNotFound,
  DeclaredReachMismatch,
  DigestMismatch,
  InstallPolicyRefused,
  InstallRequestInvalid,
  LocalSourceUnreadable,
  ManifestInvalid,
  ManifestVersionUnsupported,
  PackageCacheUnavailable,
  PackageNotListed,
  IntegrityMismatch,
  PackageNotInRegistry,
  ProvenanceInvalid,
  RegistryNotConfigured,
  RegistryUnavailable,
  SignatureInvalid,
  TarballRefused
} from "../../services/node/PackageErrors.js"
import { EffectNotFound, EffectNotUnknown, LedgerUnavailable } from "../../services/node/LedgerErrors.js"
import { NotImplementedYet } from "../../services/node/PendingErrors.js"
import {
  OfferedReportInvalid,
  OfferedRequestAnswered,
  OfferedRequestNotFound
} from "../../services/node/OfferedActionErrors.js"
import {
  ServiceCancelled,
  ServiceTimedOut,
  ServiceToolFailed,
  ServiceToolNotOffered,
  ServiceUnreachable
} from "../../services/node/ServiceErrors.js"
import {
  ActionInProgress,
  ActionNotOffered,
  ActionUnavailable,
  AlreadyRetried,
  BackgroundBusy,
  NotAnUpdate,
  NoticeNotFound,
  SkippedVersionNotFound,
  SnoozeInvalid,
  SurfaceOnlyAction,
  UndoExpired,
  UnknownNoticeAction,
  WorkNotFound,
  WorkNotRetryable,
  WorkNotRunning
} from "../../services/node/InboxErrors.js"
import { JobNotFound, JobNotRunning, JobUnavailable, WidgetNotHere } from "../../services/node/JobErrors.js"
import { PreferenceInvalid } from "../../services/node/PreferenceErrors.js"
import { ExportRefused } from "../../services/node/TableExport.js"
import { SecretNameReserved, SecretStoreUnavailable } from "../../services/node/SecretErrors.js"
import {
  TileFetchFailed,
  TileKeyUnavailable,
  TileMissing,
  TileOutOfBounds,
  TileRefused,
  TilesOff,
  TilesRateLimited
} from "../../services/node/TileErrors.js"
import type { NodeDomainError } from "../../src/node/http/Errors.js"

export type Row = readonly [error: NodeDomainError, status: number, code: string, members: Record<string, unknown>]

export const rows: ReadonlyArray<Row> = [
  // Conversations, turns, questions, host-controls
  [new ConversationNotFound({ conversationId: "c1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new TurnNotFound({ conversationId: "c1", taskId: "task_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new LastEventIdInvalid({ given: "none:1" }), 400, "INVALID_INPUT", { field: "last-event-id" }],
  [
    new ReferenceNotAvailable({ reference: { kind: "skill", id: "sk_1", label: "Old skill" } }),
    400,
    "REFERENCE_NOT_AVAILABLE",
    { reference: { kind: "skill", id: "sk_1" } }
  ],
  [new QuestionNotFound({ conversationId: "c1", questionId: "q1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new QuestionClosed({ questionId: "q1", status: "answered" }), 409, "QUESTION_CLOSED", { status: "answered" }],
  [new QuestionOpen({ questionId: "q1" }), 409, "QUESTION_OPEN", {}],
  [new AlreadyAskedAgain({ questionId: "q1", askedAgainAs: "q2" }), 409, "ALREADY_ASKED_AGAIN", { askedAgainAs: "q2" }],
  [
    new AnswerInvalid({ questionId: "q1", reason: "text-not-allowed" }),
    400,
    "INVALID_INPUT",
    { field: "text", reason: "text-not-allowed" }
  ],
  [
    new AnswerInvalid({ questionId: "q1", reason: "unknown-option" }),
    400,
    "INVALID_INPUT",
    { field: "optionIds", reason: "unknown-option" }
  ],
  [new AnswerInvalid({ questionId: "q1", reason: "empty" }), 400, "INVALID_INPUT", { field: null, reason: "empty" }],
  [new HostControlNotFound({ controlId: "hc1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new HostControlAnswered({ controlId: "hc1" }), 409, "HOST_CONTROL_ANSWERED", {}],
  // Who is asking
  [new Unauthenticated(), 401, "UNAUTHENTICATED", {}],
  [new PersonOnlyRefused({ surface: "cli-api" }), 403, "PERSON_ONLY", { surface: "cli-api" }],
  // Map tiles
  [new TilesOff(), 404, "MAP_TILES_OFF", {}],
  [new TileOutOfBounds({ z: 6, x: 0, y: 0, maxZoom: 5 }), 400, "MAP_TILE_OUT_OF_BOUNDS", { z: 6, x: 0, y: 0, maxZoom: 5 }],
  [
    new TilesRateLimited({ retryAfterSeconds: 0.25, perSecond: 12, burst: 48 }),
    429,
    "MAP_TILES_RATE_LIMITED",
    { retryAfterSeconds: 0.25 }
  ],
  [new TileKeyUnavailable({ offline: "key-origin-mismatch" }), 503, "MAP_TILE_KEY_UNAVAILABLE", { offline: "key-origin-mismatch" }],
  [new TileKeyUnavailable({}), 503, "MAP_TILE_KEY_UNAVAILABLE", {}],
  [new TileMissing({ reason: "The tile provider has no such tile (404)" }), 404, "MAP_TILE_MISSING", {}],
  [new TileFetchFailed({ reason: "The tile provider answered 500" }), 502, "MAP_TILE_FAILED", {}],
  [new TileRefused({ reason: "The tile is larger than 524288 bytes" }), 502, "MAP_TILE_REFUSED", {}],
  // Secrets
  [new SecretStoreUnavailable({ reason: "EACCES /data/secrets.json" }), 503, "MAP_TILE_KEY_UNAVAILABLE", {}],
  [new SecretNameReserved({ name: "maps:tiles" }), 400, "INVALID_INPUT", { field: "name", reason: "reserved-name" }],
  // Package credentials and connections
  [new CredentialNameInvalid({ name: "9lives", problem: "characters" }), 400, "INVALID_INPUT", { field: "name", reason: "name-characters" }],
  [new PackageNotInstalled({ packageId: "weather" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new TileKeyConsumer({ packageId: "maps" }), 400, "INVALID_INPUT", { field: "packageId", reason: "maps-tiles-consumer" }],
  [new CredentialStoreUnavailable({ reason: "EACCES" }), 503, "SECRET_STORE_UNAVAILABLE", {}],
  [new CallbackHostInvalid(), 400, "INVALID_INPUT", { field: "host" }],
  // Preferences, deletion, pending routes
  [
    new PreferenceInvalid({ key: "maps.tilePolicy", problem: "maxZoom: Expected a number between 0 and 19" }),
    400,
    "PREFERENCE_INVALID",
    { key: "maps.tilePolicy", problem: "maxZoom: Expected a number between 0 and 19" }
  ],
  [
    new DeletionRefused({ say: "A reply is still being written" }),
    409,
    "CONVERSATION_BUSY",
    { deleted: false, decision: { kind: "refused", say: "A reply is still being written" } }
  ],
  [
    new DeletionPermitInvalid({ reason: "expired", say: "That deletion permit expired." }),
    409,
    "DELETION_PERMIT_INVALID",
    { deleted: false, decision: { kind: "refused", say: "That deletion permit expired." }, reason: "expired" }
  ],
  [new ConfirmationNotFound(), 404, "RESOURCE_NOT_FOUND", {}],
  [
    new ThemeNotAvailable({ themeRef: "package:x#y", code: "THEME_NOT_INSTALLED", reason: "x is not installed" }),
    409,
    "THEME_NOT_INSTALLED",
    {}
  ],
  // Packages
  [new LocalSourceUnreadable({ reason: "link", path: "a/b" }), 400, "LOCAL_SOURCE_UNREADABLE", { reason: "link", path: "a/b" }],
  [
    new LocalSourceUnreadable({ reason: "too-many-files", limit: 5000 }),
    400,
    "LOCAL_SOURCE_UNREADABLE",
    { reason: "too-many-files", limit: 5000 }
  ],
  [
    new ManifestInvalid({ path: "clark.tools[0].risk", problem: "Expected \"read\"" }),
    400,
    "LOCAL_SOURCE_UNREADABLE",
    { reason: "manifest", path: "clark.tools[0].risk", problem: "Expected \"read\"" }
  ],
  [
    new ManifestVersionUnsupported({ found: "2", supported: 1 }),
    400,
    "LOCAL_SOURCE_UNREADABLE",
    { reason: "manifest-version", path: "clark.manifestVersion" }
  ],
  [new DigestMismatch({ expected: "sha256:a", actual: "sha256:b" }), 409, "DIGEST_MISMATCH", { expected: "sha256:a", actual: "sha256:b" }],
  [new PackageCacheUnavailable({ detail: "ENOSPC" }), 503, "PACKAGE_CACHE_UNAVAILABLE", {}],
  [new PackageNotListed({ packageId: "nope" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new InstallRequestInvalid({ field: "localDigest", problem: "required" }), 400, "INVALID_INPUT", { field: "localDigest" }],
  [new DeclaredReachMismatch({ undeclared: [{ kind: "network", value: "tides.example.org", access: null }] }), 409, "DECLARED_REACH_MISMATCH", { undeclared: [{ kind: "network", value: "tides.example.org", access: null }] }],
  [new InstallPolicyRefused({ mode: "off" }), 403, "POLICY_REFUSED", {}],
  [new RegistryNotConfigured({ setting: "CC_REGISTRY_URL" }), 504, "SERVICE_UNREACHABLE", {}],
  [new RegistryUnavailable({ name: "x", stage: "tarball", problem: "refused" }), 504, "SERVICE_UNREACHABLE", {}],
  [new PackageNotInRegistry({ name: "x", version: "1.0.0" }), 404, "RESOURCE_NOT_FOUND", {}],
  [
    new IntegrityMismatch({ name: "x", version: "1.0.0", expected: "sha512-a", actual: "sha512-b" }),
    409,
    "DIGEST_MISMATCH",
    { expected: "sha512-a", actual: "sha512-b" }
  ],
  [
    new TarballRefused({ name: "x", version: "1.0.0", reason: "path-escape", path: "../x" }),
    400,
    "LOCAL_SOURCE_UNREADABLE",
    { reason: "path-escape", path: "../x" }
  ],
  [new SignatureInvalid({ name: "x", version: "1.0.0", problem: "bad" }), 403, "POLICY_REFUSED", { reason: "signature" }],
  [new ProvenanceInvalid({ name: "x", version: "1.0.0", problem: "bad" }), 403, "POLICY_REFUSED", { reason: "provenance" }],
  [new ApprovalNotFound({ approvalId: "apr_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new ApprovalForged({ approvalId: "apr_1" }), 403, "APPROVAL_FORGED", {}],
  [new ApprovalAlreadyDecided({ approvalId: "apr_1", status: "denied" }), 409, "APPROVAL_ALREADY_DECIDED", { status: "denied" }],
  [new ApprovalExpired({ approvalId: "apr_1" }), 409, "APPROVAL_EXPIRED", {}],
  // Service packages
  [new ServiceUnreachable({ packageId: "p", reason: "start-failed" }), 504, "SERVICE_UNREACHABLE", {}],
  [new ServiceToolFailed({ packageId: "p", tool: "save_note", reason: "crashed", detail: "exit 1" }), 502, "SERVICE_TOOL_FAILED", {}],
  [new ServiceTimedOut({ packageId: "p", tool: "save_note", timeoutMillis: 30000 }), 504, "SERVICE_TIMED_OUT", {}],
  [new ServiceCancelled({ packageId: "p", tool: "save_note", by: "stop" }), 409, "SERVICE_CANCELLED", {}],
  [new ServiceToolNotOffered({ packageId: "p", tool: "rm_rf" }), 404, "RESOURCE_NOT_FOUND", {}],
  // The effect ledger
  [new LedgerUnavailable({ operation: "record", detail: "SqliteError: attempt to write a readonly database" }), 503, "LEDGER_UNAVAILABLE", {}],
  [new EffectNotFound({ effectId: "eff_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new EffectNotUnknown({ effectId: "eff_1", status: "confirmed" }), 409, "EFFECT_NOT_UNKNOWN", { status: "confirmed" }],
  // Widget files
  [new ArtifactNotFound({ artifactId: "art_1" }), 404, "ARTIFACT_NOT_FOUND", {}],
  [new ArtifactNotFinalized({ artifactId: "art_1" }), 409, "ARTIFACT_NOT_FINALIZED", {}],
  [new ArtifactNotCreator({ artifactId: "art_1" }), 403, "ARTIFACT_NOT_CREATOR", {}],
  [
    new ArtifactStorageFull({ scope: "instance", limitBytes: 134217728 }),
    409,
    "ARTIFACT_INSTANCE_QUOTA_EXCEEDED",
    { scope: "instance", limitBytes: 134217728 }
  ],
  [
    new ArtifactWriteRefused({ artifactId: "art_1", problem: "offset-mismatch", sizeBytes: 10 }),
    400,
    "INVALID_INPUT",
    { field: "offset", reason: "offset-mismatch", sizeBytes: 10 }
  ],
  [
    new ArtifactWriteRefused({ artifactId: "art_1", problem: "type-mismatch", found: "image/png" }),
    400,
    "INVALID_INPUT",
    { field: "mimeType", reason: "type-mismatch" }
  ],
  [new FileWriteRefused({ reason: "deny-rule", operation: "artifacts.create" }), 403, "POLICY_REFUSED", { reason: "deny-rule" }],
  [new ApprovalsPending({ surface: "cli-api", limit: 8 }), 429, "APPROVALS_PENDING", {}],
  [new UnknownNoticeAction({ given: "%64ismiss" }), 400, "UNKNOWN_ACTION", {}],
  [new SurfaceOnlyAction({ action: "open" }), 409, "SURFACE_ACTION", { action: "open" }],
  [new NoticeNotFound({ noticeId: "ntc_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new ActionNotOffered({ noticeId: "ntc_1", action: "retry" }), 409, "ACTION_NOT_OFFERED", { action: "retry" }],
  [
    new ActionUnavailable({ noticeId: "ntc_1", action: "update", reason: "package-gone" }),
    409,
    "ACTION_UNAVAILABLE",
    { action: "update", unavailable: "package-gone" }
  ],
  [new ActionInProgress({ noticeId: "ntc_1", action: "update" }), 409, "ACTION_IN_PROGRESS", { action: "update" }],
  [new UndoExpired({ noticeId: "ntc_1", dismissedAt: "2026-01-01T00:00:00.000Z" }), 409, "UNDO_EXPIRED", { dismissedAt: "2026-01-01T00:00:00.000Z" }],
  [new SnoozeInvalid({ problem: "too-far" }), 400, "INVALID_INPUT", { field: "until", reason: "too-far" }],
  [new NotAnUpdate({ noticeId: "ntc_1", kind: "question-expired" }), 409, "NOT_AN_UPDATE", {}],
  [new SkippedVersionNotFound({ kind: "package", name: "p", version: "1.0.0" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new WorkNotFound({ workId: "task_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new AlreadyRetried({ workId: "task_1", retriedAs: "task_2" }), 409, "ALREADY_RETRIED", { retriedAs: "task_2" }],
  [new WorkNotRetryable({ workId: "task_1", status: "completed" }), 409, "WORK_NOT_RETRYABLE", { status: "completed" }],
  [new BackgroundBusy({ reason: "conversation-busy" }), 429, "BACKGROUND_BUSY", { reason: "conversation-busy" }],
  [new WorkNotRunning({ workId: "task_1", status: "completed" }), 409, "JOB_NOT_RUNNING", { status: "completed" }],
  [new NotImplementedYet({ feature: "package credentials" }), 501, "NOT_IMPLEMENTED", {}],
  // Widgets
  [new InstanceUnknown({ instanceId: "wgt_1" }), 404, "INSTANCE_UNKNOWN", {}],
  [new WidgetNotInstalled({ packageId: "p" }), 409, "NOT_INSTALLED", {}],
  [new NoFrame({ instanceId: "wgt_1" }), 400, "UNSUPPORTED_ACTION", { reason: "host-drawn" }],
  [new PressSchemaInvalid({ reason: "reserved-invocation-id" }), 400, "INVALID_SCHEMA", { reason: "reserved-invocation-id" }],
  [
    new PressUnsupported({ actionBindingId: "refresh", reason: "variant-on-other-binding" }),
    400,
    "UNSUPPORTED_ACTION",
    { reason: "variant-on-other-binding", actionBindingId: "refresh" }
  ],
  [
    new PressInputInvalid({ field: "expectedRevision", reason: "stale-revision" }),
    400,
    "INVALID_INPUT",
    { field: "expectedRevision", reason: "stale-revision" }
  ],
  [
    new PressRateLimited({ actionBindingId: "refresh", limit: 6, retryAfterMs: 1500 }),
    429,
    "RATE_LIMITED",
    { outcome: "refused", mayHaveRun: false, recorded: false, limit: 6, retryAfterMs: 1500 }
  ],
  [
    new PressInterrupted({ invocationId: "i1" }),
    409,
    "ACTION_INTERRUPTED",
    { outcome: "uncertain", mayHaveRun: true, recorded: false }
  ],
  [
    new PressFailed({
      failure: "service-timed-out",
      outcome: "uncertain",
      mayHaveRun: true,
      recorded: true,
      taskId: "task_1",
      effectId: "eff_1",
      workflow: [{ step: "call", status: "uncertain", code: "SERVICE_TIMED_OUT" }]
    }),
    504,
    "SERVICE_TIMED_OUT",
    {
      outcome: "uncertain",
      mayHaveRun: true,
      recorded: true,
      taskId: "task_1",
      effectId: "eff_1",
      workflow: [{ step: "call", status: "uncertain", code: "SERVICE_TIMED_OUT" }]
    }
  ],
  [new JobNotFound({ jobId: "job_1" }), 404, "JOB_NOT_FOUND", {}],
  [new JobNotRunning({ jobId: "job_1", status: "completed" }), 409, "JOB_NOT_RUNNING", { jobId: "job_1", status: "completed" }],
  [new JobUnavailable({ reason: "shutting-down" }), 503, "JOB_UNAVAILABLE", { reason: "shutting-down" }],
  [new WidgetNotHere({ instanceId: "wgt_1" }), 404, "INSTANCE_UNKNOWN", {}],
  [new ExportRefused({ reason: "not-a-table" }), 400, "INVALID_INPUT", { reason: "not-a-table" }],
  [new ExportRefused({ reason: "unknown-column", column: "x", field: "sort" }), 400, "INVALID_INPUT", { reason: "unknown-column", field: "sort" }],
  // Offered actions: the app's report of what a widget did
  [new OfferedRequestNotFound({ requestId: "ofr_1" }), 404, "RESOURCE_NOT_FOUND", {}],
  [new OfferedRequestAnswered({ requestId: "ofr_1", status: "done" }), 409, "OFFERED_ACTION_ANSWERED", { requestId: "ofr_1", status: "done" }],
  [new OfferedReportInvalid({ field: "code", reason: "refusal-needs-code" }), 400, "INVALID_INPUT", { field: "code", reason: "refusal-needs-code" }]
]
