/**
 * Wire codes of machine-surface widget file writes (docs/decisions.md, "Machine-surface widget file writes"),
 * spread into the node's one mapping (Errors.ts).
 */
import { NodeError } from "../../../../schema/node/Errors.js"
import type { ApprovalsPending } from "../../../../services/node/ArtifactErrors.js"

export const fileWriteRefusals = {
  // No members: the limit is the spec's fixed 8, said in the message (the code's wire schema carries none).
  ApprovalsPending: (e: ApprovalsPending) =>
    new NodeError({
      code: "APPROVALS_PENDING",
      message: `${e.limit} file-write approvals from ${e.surface} already wait in this conversation (at most ${e.limit}); ` +
        "nothing was asked or written"
    })
}
