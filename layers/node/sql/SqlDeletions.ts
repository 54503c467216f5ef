/**
 * Deletions on the node's SQLite database: tokens and permits in `deletion_tokens` (as digests), the
 * conversation's rows removed in one transaction that also spends the permit, then its artifact files.
 *
 * Kept: saved memory, notices (the inbox shows them as conversation-gone), task approvals and the effect ledger
 * (replication and reconcile history), the audit log. A crash after the commit and before the files are gone
 * leaves files without rows, which the artifact store's sweep removes at the next start.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Effect, Layer, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { DenyRules } from "../../../schema/node/Preferences.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { ConversationActivity, refusalSay } from "../../../services/node/ConversationActivity.js"
import { ConversationNotFound } from "../../../services/node/ConversationErrors.js"
import { ConversationStore } from "../../../services/node/ConversationStore.js"
import { ConfirmationNotFound, DeletionPermitInvalid, DeletionRefused } from "../../../services/node/DeletionErrors.js"
import {
  askReadBack,
  confirmationLifetimeMs,
  type Contents,
  deletionStep,
  Deletions,
  digestOf,
  doneReadBack,
  holderOf,
  permitProblem,
  permitSays,
  policySay
} from "../../../services/node/Deletions.js"
import { matches } from "../../../services/node/ExecutionPolicy.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { permitLifetimeMs } from "../../../schema/node/Deletion.js"
import { artifactsDir } from "./SqlArtifactStore.js"

const TokenRow = Schema.Struct({
  digest: Schema.String,
  kind: Schema.Literal("confirmation", "permit"),
  conversationId: Schema.String,
  holder: Schema.String,
  expiresAtMs: Schema.Number,
  usedAtMs: Schema.NullOr(Schema.Number)
})
const decodeTokens = Schema.decodeUnknown(Schema.Array(TokenRow))

const ArtifactRow = Schema.Struct({ id: Schema.String, kind: Schema.String, state: Schema.String })
const decodeArtifacts = Schema.decodeUnknown(Schema.Array(ArtifactRow))

const newToken = (prefix: string) => Effect.sync(() => `${prefix}_${randomBytes(32).toString("base64url")}`)
const iso = (ms: number) => DateTime.formatIso(DateTime.unsafeMake(ms))

export const make = (options: { readonly dataDir: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ConversationStore
    const activity = yield* ConversationActivity
    const preferences = yield* PreferenceStore
    const audit = yield* AuditLog
    const filesDir = artifactsDir(options.dataDir)

    const conversation = (conversationId: string) =>
      Effect.flatMap(
        store.get(conversationId),
        Option.match({
          onNone: () => Effect.fail(new ConversationNotFound({ conversationId })),
          onSome: Effect.succeed
        })
      )

    const token = (digest: string, kind: "confirmation" | "permit") =>
      sql`SELECT digest, kind, conversation_id, holder, expires_at_ms, used_at_ms FROM deletion_tokens
        WHERE digest = ${digest} AND kind = ${kind}`.pipe(
        Effect.flatMap(decodeTokens),
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const insertToken = (kind: "confirmation" | "permit", conversationId: string, holder: string, expiresAtMs: number) =>
      Effect.gen(function*() {
        const value = yield* newToken(kind === "permit" ? "dlp" : "dlc")
        yield* sql`INSERT INTO deletion_tokens ${
          sql.insert({
            digest: digestOf(value),
            kind,
            conversationId,
            holder,
            expiresAtMs,
            usedAtMs: null,
            createdAt: iso(yield* Clock.currentTimeMillis)
          })
        }`.pipe(Effect.orDie)
        return value
      })

    /** Spends a token in one conditional write: of concurrent spenders exactly one wins. */
    const spend = (digest: string, nowMs: number) =>
      sql`UPDATE deletion_tokens SET used_at_ms = ${nowMs} WHERE digest = ${digest} AND used_at_ms IS NULL
        RETURNING digest`.pipe(Effect.map((rows) => rows.length === 1))

    const contents = (conversationId: string, title: string | null) =>
      sql`SELECT id, kind, state FROM artifacts WHERE conversation_id = ${conversationId}`.pipe(
        Effect.flatMap(decodeArtifacts),
        Effect.orDie,
        Effect.map((files) => {
          const finished = files.filter((f) => f.state === "finalized")
          const counts: Contents = {
            title,
            // Files the person chose and handed over; the others were made by widgets, jobs or media.
            attachments: finished.filter((f) => f.kind === "picked").length,
            artifacts: finished.filter((f) => f.kind !== "picked").length,
            pendingFiles: files.length - finished.length
          }
          return { files: files.map((f) => f.id), counts }
        })
      )

    const settled = (conversationId: string) =>
      Effect.flatMap(activity.unsettled(conversationId), (unsettled) =>
        unsettled.length === 0 ? Effect.void : Effect.fail(new DeletionRefused({ say: refusalSay(unsettled) })))

    const policyAllows = (caller: Parameters<typeof deletionStep>[0]) =>
      Effect.gen(function*() {
        const stored = yield* preferences.get("execution.denyRules")
        const rules = Option.getOrElse(
          Option.flatMap(stored, (state) => Schema.decodeUnknownOption(DenyRules)(state.value)),
          () => []
        )
        const step = deletionStep(caller)
        if (rules.some((rule) => matches(rule, step))) return yield* new DeletionRefused({ say: policySay })
      })

    const removeRows = (conversationId: string) =>
      Effect.all([
        sql`DELETE FROM turn_events WHERE task_id IN
          (SELECT task_id FROM messages WHERE conversation_id = ${conversationId} AND task_id IS NOT NULL)`,
        sql`DELETE FROM client_requests WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM questions WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM host_controls WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM messages WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM artifacts WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM widget_presses WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM widget_semantics WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM widget_instances WHERE conversation_id = ${conversationId}`,
        // Deletion waits for running jobs, so these have ended; their notices stay in the inbox.
        sql`DELETE FROM jobs WHERE conversation_id = ${conversationId}`,
        sql`DELETE FROM conversations WHERE id = ${conversationId}`
      ], { discard: true })

    return Deletions.of({
      request: (conversationId, caller) =>
        Effect.gen(function*() {
          const found = yield* conversation(conversationId)
          yield* settled(conversationId)
          const { counts } = yield* contents(conversationId, found.title)
          const nowMs = yield* Clock.currentTimeMillis
          const confirmationToken = yield* insertToken(
            "confirmation",
            conversationId,
            holderOf(caller),
            nowMs + confirmationLifetimeMs
          )
          yield* audit.append({
            kind: "conversation-delete.asked",
            conversationId,
            surface: caller.surface,
            channel: caller.channel
          })
          return {
            deleted: false,
            decision: {
              kind: "needs-confirmation",
              intent: { kind: "conversation.delete", conversationId, title: found.title },
              readBack: askReadBack(counts),
              confirmationToken
            }
          } as const
        }),

      confirm: (confirmationToken, decision, caller) =>
        Effect.gen(function*() {
          const digest = digestOf(confirmationToken)
          const row = yield* token(digest, "confirmation")
          const nowMs = yield* Clock.currentTimeMillis
          if (row === undefined || row.usedAtMs !== null || row.holder !== holderOf(caller) || nowMs >= row.expiresAtMs) {
            return yield* new ConfirmationNotFound()
          }
          if (!(yield* Effect.orDie(spend(digest, nowMs)))) return yield* new ConfirmationNotFound()
          const found = yield* Effect.mapError(conversation(row.conversationId), () => new ConfirmationNotFound())
          const intent = { kind: "conversation.delete", conversationId: found.id, title: found.title } as const
          yield* audit.append({
            kind: `conversation-delete.${decision}`,
            conversationId: found.id,
            surface: caller.surface,
            channel: caller.channel
          })
          if (decision === "denied") return { decision: { kind: "denied", intent } } as const
          const expiresAtMs = nowMs + permitLifetimeMs
          const deletionPermit = yield* insertToken("permit", found.id, holderOf(caller), expiresAtMs)
          return { decision: { kind: "granted", intent: { ...intent, deletionPermit, expiresAt: iso(expiresAtMs) } } } as const
        }),

      delete: (conversationId, permit, caller) =>
        Effect.gen(function*() {
          const found = yield* conversation(conversationId)
          const digest = digestOf(permit)
          const stored = yield* token(digest, "permit")
          const nowMs = yield* Clock.currentTimeMillis
          const problem = permitProblem(stored, conversationId, holderOf(caller), nowMs)
          if (problem !== undefined) return yield* new DeletionPermitInvalid({ reason: problem, say: permitSays[problem] })
          // A refusal that arose since the person confirmed wins over the permit (which stays unspent).
          yield* policyAllows(caller)
          yield* settled(conversationId)
          // The files are listed inside the transaction: one written meanwhile is counted and removed too.
          const removed = yield* sql.withTransaction(Effect.gen(function*() {
            if (!(yield* spend(digest, nowMs))) return undefined
            const listed = yield* contents(conversationId, found.title)
            yield* removeRows(conversationId)
            return listed
          })).pipe(Effect.orDie)
          if (removed === undefined) return yield* new DeletionPermitInvalid({ reason: "used", say: permitSays.used })
          const { counts, files } = removed
          yield* Effect.forEach(
            files,
            (id) => Effect.promise(() => fs.rm(path.join(filesDir, id), { force: true })),
            { discard: true }
          )
          yield* audit.append({
            kind: "conversation-deleted",
            conversationId,
            surface: caller.surface,
            channel: caller.channel,
            detail: { attachments: counts.attachments, artifacts: counts.artifacts, pendingFiles: counts.pendingFiles }
          })
          return {
            deleted: true,
            conversationId,
            attachments: counts.attachments,
            artifacts: counts.artifacts,
            pendingFiles: counts.pendingFiles,
            readBack: doneReadBack(counts)
          } as const
        })
    })
  })

export const layer = (options: { readonly dataDir: string }) => Layer.effect(Deletions, make(options))
