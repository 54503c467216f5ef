/**
 * Conversation deletion: POST /conversations/{id}/delete and the person's
 * confirmation through POST /app-intents/confirm, which hands out a
 * single-use deletion permit (two minutes, that person and conversation).
 *
 * A blocked deletion is 409 `{deleted: false, decision: {kind: refused, say}}`;
 * it travels with code CONVERSATION_BUSY beside those members (domain error
 * `DeletionRefused`), so the body also carries `code` and `message`. A permit
 * that cannot be used (unknown, spent, expired, another conversation's) has the
 * same body with code DELETION_PERMIT_INVALID and its `reason`.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ConversationPath } from "./Conversation.js"
import { refusals } from "./Errors.js"
import { PersonOnly } from "./Security.js"

export const permitLifetimeMs = 2 * 60 * 1000

export const DeletionPermit = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500))

/** `{}` first; `{deletionPermit}` after the person confirmed. */
export const DeleteRequest = Schema.Struct({ deletionPermit: Schema.optional(DeletionPermit) }).annotations({
  identifier: "DeleteRequest"
})

/** What is to be deleted; after a granted confirmation it carries the permit. */
export const DeletionIntent = Schema.Struct({
  kind: Schema.Literal("conversation.delete"),
  conversationId: Schema.String,
  title: Schema.NullOr(Schema.String),
  deletionPermit: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.String)
}).annotations({ identifier: "DeletionIntent" })

/** 202: policy asks the person first; nothing deleted. */
export const DeletionNeedsConfirmation = Schema.Struct({
  deleted: Schema.Literal(false),
  decision: Schema.Struct({
    kind: Schema.Literal("needs-confirmation"),
    intent: DeletionIntent,
    readBack: Schema.String,
    confirmationToken: Schema.String
  })
}).annotations({ identifier: "DeletionNeedsConfirmation" })

/** 200: what was removed (counts) and the sentence read back to the person. */
export const ConversationDeleted = Schema.Struct({
  deleted: Schema.Literal(true),
  conversationId: Schema.String,
  attachments: Schema.Int.pipe(Schema.nonNegative()),
  artifacts: Schema.Int.pipe(Schema.nonNegative()),
  pendingFiles: Schema.Int.pipe(Schema.nonNegative()),
  readBack: Schema.String
}).annotations({ identifier: "ConversationDeleted" })

export const ConfirmRequest = Schema.Struct({
  confirmationToken: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  decision: Schema.Literal("granted", "denied")
}).annotations({ identifier: "ConfirmRequest" })

/** Denied keeps everything; granted carries the permit in `intent.deletionPermit`. */
export const Confirmed = Schema.Struct({
  decision: Schema.Struct({ kind: Schema.Literal("granted", "denied"), intent: DeletionIntent })
}).annotations({ identifier: "Confirmed" })

export class DeletionGroup extends HttpApiGroup.make("deletion")
  .add(
    HttpApiEndpoint.post("delete", "/conversations/:id/delete")
      .setPath(ConversationPath)
      .setPayload(DeleteRequest)
      .addSuccess(ConversationDeleted)
      .addSuccess(DeletionNeedsConfirmation, { status: 202 })
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND", "CONVERSATION_BUSY", "DELETION_PERMIT_INVALID"))
      .middleware(PersonOnly)
  )
  .add(
    HttpApiEndpoint.post("confirm", "/app-intents/confirm")
      .setPayload(ConfirmRequest)
      .addSuccess(Confirmed)
      .addError(refusals("INVALID_INPUT", "RESOURCE_NOT_FOUND"))
      .middleware(PersonOnly)
  )
{}
