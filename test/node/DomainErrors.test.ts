/**
 * The node's mapping from domain errors to the wire (src/node/http/Errors.ts),
 * one row per domain error: status, code and members, and the body the
 * contract's wire schema for that code actually sends.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { NodeError, wireOfCode } from "../../schema/node/Errors.js"
import {
  ConversationNotFound,
  HostControlAnswered,
  LastEventIdInvalid,
  QuestionClosed,
  QuestionOpen
} from "../../services/node/ConversationErrors.js"
import { LedgerUnavailable } from "../../services/node/LedgerErrors.js"
import { SecretStoreUnavailable } from "../../services/node/SecretErrors.js"
import { TilesOff } from "../../services/node/TileErrors.js"
import { type NodeDomainError, quote, quotedLength, toNodeError, wire, wired } from "../../src/node/http/Errors.js"
import { rows } from "./DomainErrorRows.js"

describe("toNodeError", () => {
  it.each(rows)("%s → %i %s", (error, status, code, members) => {
    const mapped = toNodeError(error)
    expect(mapped).toBeInstanceOf(NodeError)
    expect([mapped.status, mapped.code, mapped.members]).toEqual([status, code, members])
    expect(mapped.message.length).toBeGreaterThan(0)
    // What the route sends: the code's own wire schema, with its status annotation.
    const body = Schema.encodeSync(wireOfCode[mapped.code])(mapped)
    expect(body).toEqual({ code, message: mapped.message, ...members })
  })

  it("has a row for every domain error", () => {
    // The compiler refuses this record when a domain error is added or removed without it.
    const every: Record<NodeDomainError["_tag"], true> = {
      ConversationNotFound: true,
      TurnNotFound: true,
      ArtifactNotFound: true,
      ArtifactNotFinalized: true,
      ArtifactNotCreator: true,
      ArtifactStorageFull: true,
      ArtifactWriteRefused: true,
      FileWriteRefused: true,
      ApprovalsPending: true,
      LastEventIdInvalid: true,
      ReferenceNotAvailable: true,
      QuestionNotFound: true,
      QuestionClosed: true,
      QuestionOpen: true,
      AlreadyAskedAgain: true,
      AnswerInvalid: true,
      HostControlNotFound: true,
      HostControlAnswered: true,
      Unauthenticated: true,
      PersonOnlyRefused: true,
      TilesOff: true,
      TileOutOfBounds: true,
      TilesRateLimited: true,
      TileKeyUnavailable: true,
      TileMissing: true,
      TileFetchFailed: true,
      TileRefused: true,
      SecretStoreUnavailable: true,
      SecretNameReserved: true,
      CredentialNameInvalid: true,
      PackageNotInstalled: true,
      TileKeyConsumer: true,
      CredentialStoreUnavailable: true,
      CallbackHostInvalid: true,
      PreferenceInvalid: true,
      DeletionRefused: true,
      DeletionPermitInvalid: true,
      ConfirmationNotFound: true,
      ThemeNotAvailable: true,
      LocalSourceUnreadable: true,
      ManifestInvalid: true,
      ManifestVersionUnsupported: true,
      DigestMismatch: true,
      PackageCacheUnavailable: true,
      PackageNotListed: true,
      InstallRequestInvalid: true,
      DeclaredReachMismatch: true,
      InstallPolicyRefused: true,
      RegistryNotConfigured: true,
      RegistryUnavailable: true,
      PackageNotInRegistry: true,
      IntegrityMismatch: true,
      TarballRefused: true,
      SignatureInvalid: true,
      ProvenanceInvalid: true,
      ApprovalNotFound: true,
      ApprovalForged: true,
      ApprovalAlreadyDecided: true,
      ApprovalExpired: true,
      ServiceUnreachable: true,
      ServiceToolFailed: true,
      ServiceTimedOut: true,
      ServiceCancelled: true,
      ServiceToolNotOffered: true,
      LedgerUnavailable: true,
      EffectNotFound: true,
      EffectNotUnknown: true,
      UnknownNoticeAction: true,
      SurfaceOnlyAction: true,
      NoticeNotFound: true,
      ActionNotOffered: true,
      ActionUnavailable: true,
      ActionInProgress: true,
      UndoExpired: true,
      SnoozeInvalid: true,
      NotAnUpdate: true,
      SkippedVersionNotFound: true,
      WorkNotFound: true,
      AlreadyRetried: true,
      WorkNotRetryable: true,
      BackgroundBusy: true,
      WorkNotRunning: true,
      NotImplementedYet: true,
      InstanceUnknown: true,
      WidgetNotInstalled: true,
      NoFrame: true,
      PressSchemaInvalid: true,
      PressUnsupported: true,
      PressInputInvalid: true,
      PressRateLimited: true,
      PressInterrupted: true,
      PressFailed: true,
      JobNotFound: true,
      JobNotRunning: true,
      JobUnavailable: true,
      WidgetNotHere: true,
      ExportRefused: true,
      OfferedRequestNotFound: true,
      OfferedRequestAnswered: true,
      OfferedReportInvalid: true
    }
    expect(new Set(rows.map(([error]) => error._tag))).toEqual(new Set(Object.keys(every)))
  })

  it("quotes only a short, single-line prefix of what the client sent", () => {
    const huge = "x".repeat(1024 * 1024)
    for (
      const error of [
        new ConversationNotFound({ conversationId: huge }),
        new LastEventIdInvalid({ given: huge }),
        new QuestionClosed({ questionId: huge, status: "cancelled" }),
        new HostControlAnswered({ controlId: huge })
      ]
    ) {
      expect(toNodeError(error).message.length).toBeLessThan(quotedLength + 80)
    }
    expect(quote("line\r\nbreak\u2028")).toBe(JSON.stringify("line  break "))
    expect(quote("a".repeat(quotedLength + 1))).toBe(JSON.stringify(`${"a".repeat(quotedLength)}…`))
  })

  it("never tells the secret store's reason or a provider's URL to the client", () => {
    const message = toNodeError(new SecretStoreUnavailable({ reason: "EACCES /data/secrets.json" })).message
    expect(message).not.toContain("secrets.json")
  })

  it("never tells the ledger database's words to the client", () => {
    const mapped = toNodeError(new LedgerUnavailable({ operation: "record", detail: "SqliteError: /data/ledger.sqlite" }))
    expect(JSON.stringify([mapped.message, mapped.members])).not.toContain("ledger.sqlite")
  })

  it.effect("`wire` turns a service call's domain failure into the route's wire error", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(wire(Effect.fail(new QuestionOpen({ questionId: "q1" }))))
      expect([failure.status, failure.code]).toEqual([409, "QUESTION_OPEN"])
      const handler = wired((id: string) => Effect.fail(new TilesOff()).pipe(Effect.as(id)))
      const refused = yield* Effect.flip(handler("t1"))
      expect([refused.status, refused.code]).toEqual([404, "MAP_TILES_OFF"])
    }))
})
