/**
 * Machine-surface widget file writes (spec, "Machine-surface widget file writes"): each write from mcp, the relay
 * or the command-line api goes through the person's execution policy; one that asks gets one approval card per
 * file (a task approval, decided by the same route), at most 8 waiting per surface per conversation; approving a
 * create or write access to a working file gives a 15-minute write right. Rules in FileWriteRules.ts.
 */
import { Context, type Effect } from "effect"
import type { Caller } from "../../schema/node/Security.js"
import type { ApprovalsPending, FileWriteRefused } from "./ArtifactErrors.js"
import type { WidgetOwner } from "./ArtifactStore.js"
import type { FileOperation } from "./FileWriteRules.js"
import type { TaskApproval } from "./TaskApprovals.js"

export interface WriteRequest {
  readonly owner: WidgetOwner
  /** The widget's content digest, shown on the card as the package's. */
  readonly packageDigest: string
  readonly operation: FileOperation
  /** The file written, attached or discarded; null for a create. */
  readonly artifactId: string | null
  /** A create's type and (sanitised) name: a different file is a different card. */
  readonly mimeType?: string | undefined
  readonly name?: string | undefined
}

/** `Run` says whether a grant cleared it (a granted create gives its file the write right). */
export type Clearance =
  | { readonly _tag: "Run"; readonly granted: boolean }
  | { readonly _tag: "Ask"; readonly approvalId: string }

export class MachineFileWrites extends Context.Tag("clark/node/MachineFileWrites")<MachineFileWrites, {
  /** The policy's answer for one write; the person's own writes always run. Refusals and cards are audited. */
  readonly clear: (caller: Caller, request: WriteRequest) => Effect.Effect<Clearance, FileWriteRefused | ApprovalsPending>
  /** After a create from a machine surface: who started the file, and the write right when a grant cleared it. */
  readonly created: (caller: Caller, artifactId: string, granted: boolean) => Effect.Effect<void>
  /** After a finalize or a discard: the file's write right ends. */
  readonly ended: (artifactId: string) => Effect.Effect<void>
  /** After the person decided a file card: it stops counting; a granted write access starts its right. */
  readonly decided: (approval: TaskApproval) => Effect.Effect<void>
}>() {}
