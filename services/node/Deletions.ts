/**
 * Conversation deletion in three steps (spec, "Conversation deletion"): the request answers a confirmation
 * token, the person's confirmation turns it into a deletion permit, and the permit deletes once. Tokens and
 * permits are stored only as their SHA-256 (a leaked database row cannot be replayed); the rules that judge a
 * permit and word the sentences are pure functions here.
 */
import { Context, type Effect } from "effect"
import { createHash } from "node:crypto"
import type { Confirmed, ConversationDeleted, DeletionNeedsConfirmation } from "../../schema/node/Deletion.js"
import type { Caller } from "../../schema/node/Security.js"
import type { ConversationNotFound } from "./ConversationErrors.js"
import type { ConfirmationNotFound, DeletionPermitInvalid, DeletionRefused } from "./DeletionErrors.js"

/** How long the person has to answer the confirmation (not shown by the spec; docs/decisions.md). */
export const confirmationLifetimeMs = 10 * 60 * 1000

export const digestOf = (token: string): string => createHash("sha256").update(token).digest("hex")

/** The person a token is bound to: the node has one person, reached through the app's own pages. */
export const holderOf = (caller: Caller): string => caller.surface

export interface StoredPermit {
  readonly conversationId: string
  readonly holder: string
  readonly expiresAtMs: number
  readonly usedAtMs: number | null
}

export type PermitProblem = DeletionPermitInvalid["reason"]

/** Why a permit cannot delete `conversationId` for `holder` at `nowMs`, or undefined when it can. */
export const permitProblem = (
  permit: StoredPermit | undefined,
  conversationId: string,
  holder: string,
  nowMs: number
): PermitProblem | undefined =>
  permit === undefined
    ? "unknown"
    : permit.usedAtMs !== null
    ? "used"
    : permit.conversationId !== conversationId
    ? "other-conversation"
    : permit.holder !== holder
    ? "other-person"
    : nowMs >= permit.expiresAtMs
    ? "expired"
    : undefined

export const permitSays: Record<PermitProblem, string> = {
  unknown: "That deletion permit is not one this node issued. Ask to delete the conversation again.",
  used: "That deletion permit was already used. Ask to delete the conversation again.",
  expired: "That deletion permit expired. Ask to delete the conversation again.",
  "other-conversation": "That deletion permit is for another conversation.",
  "other-person": "That deletion permit was issued to someone else."
}

export interface Contents {
  readonly title: string | null
  readonly attachments: number
  readonly artifacts: number
  readonly pendingFiles: number
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

const named = (title: string | null) => (title === null || title.trim() === "" ? "this conversation" : `“${title}”`)

/** What the person is asked, before anything is deleted. */
export const askReadBack = (contents: Contents): string =>
  `Delete ${named(contents.title)} with its messages, ${count(contents.attachments, "attachment", "attachments")}, ${
    count(contents.artifacts, "file", "files")
  } and ${count(contents.pendingFiles, "unfinished file", "unfinished files")}? This cannot be undone.`

/** What the person is told after the deletion. */
export const doneReadBack = (contents: Contents): string =>
  `Deleted ${named(contents.title)}: its messages, ${count(contents.attachments, "attachment", "attachments")}, ${
    count(contents.artifacts, "file", "files")
  } and ${count(contents.pendingFiles, "unfinished file", "unfinished files")}. Saved memory and the audit log were kept.`

export class Deletions extends Context.Tag("clark/node/Deletions")<Deletions, {
  /** Step 1: checks activity, then asks the person (policy always asks for a conversation's deletion). */
  readonly request: (
    conversationId: string,
    caller: Caller
  ) => Effect.Effect<typeof DeletionNeedsConfirmation.Type, ConversationNotFound | DeletionRefused>
  /** Step 2: the person's answer; granted hands out the permit. */
  readonly confirm: (
    confirmationToken: string,
    decision: "granted" | "denied",
    caller: Caller
  ) => Effect.Effect<typeof Confirmed.Type, ConfirmationNotFound>
  /** Step 3: checks the permit, policy and activity again, then deletes; the permit is spent only by a deletion. */
  readonly delete: (
    conversationId: string,
    permit: string,
    caller: Caller
  ) => Effect.Effect<
    typeof ConversationDeleted.Type,
    ConversationNotFound | DeletionRefused | DeletionPermitInvalid
  >
}>() {}

/**
 * How the execution policy sees a deletion: a destructive step of the node itself, so a deny rule naming
 * `destructive` (or this tool) refuses it like any package's destructive tool.
 */
export const deletionStep = (caller: Caller) =>
  ({ origin: caller.surface, packageId: "clark", tool: "conversation.delete", risk: "destructive" }) as const

export const policySay = "Your execution policy refuses deleting conversations (a deny rule covers it)."
