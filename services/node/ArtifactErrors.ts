/** What can refuse a widget file or a read of one (spec, "Artifact", "Widget routes"); no HTTP status here. */
import { Data, Schema } from "effect"
import { InstanceUnknown } from "./WidgetErrors.js"

/** Unknown to this node, or not this widget's (never made by it, never handed to it, or its grant ran out). */
export class ArtifactNotFound extends Data.TaggedError("ArtifactNotFound")<{ readonly artifactId: string }> {}

/** Bytes asked of a file still being written. */
export class ArtifactNotFinalized extends Data.TaggedError("ArtifactNotFinalized")<{ readonly artifactId: string }> {}

/** A widget discarding a file it did not make. */
export class ArtifactNotCreator extends Data.TaggedError("ArtifactNotCreator")<{ readonly artifactId: string }> {}

/** The widget's own files (128 MiB) or all conversation artifacts (1 GiB) would grow past their limit. */
export class ArtifactStorageFull extends Data.TaggedError("ArtifactStorageFull")<{
  readonly scope: "instance" | "share"
  readonly limitBytes: number
}> {}

export const WriteProblem = Schema.Literal(
  /** The chunk does not start where the file ends. */
  "offset-mismatch",
  /** The file is finalized: its bytes are fixed. */
  "finalized",
  /** Over 25 MiB per file. */
  "too-large",
  /** The bytes are not the declared type. */
  "type-mismatch",
  /** A picked file outside the widget's `accept` list. */
  "not-accepted",
  /** Neither made by this widget nor handed to it for writing. */
  "not-writable"
)
export type WriteProblem = typeof WriteProblem.Type

/** A write the file's state or its bytes refuse; nothing changed. */
export class ArtifactWriteRefused extends Data.TaggedError("ArtifactWriteRefused")<{
  readonly artifactId: string | null
  readonly problem: WriteProblem
  /** Where the file ends, for `offset-mismatch`; the limit, for `too-large`; what the bytes are, for `type-mismatch`. */
  readonly sizeBytes?: number | undefined
  readonly limitBytes?: number | undefined
  readonly found?: string | undefined
}> {}

/** A widget route naming an instance that is not in the conversation: the widgets' own error. */
export { InstanceUnknown }

/**
 * A widget file write from a machine surface that the person's execution policy does not run: a deny rule
 * matched (`asks-first` is no longer raised: a write the policy asks about gets an approval card).
 */
export class FileWriteRefused extends Data.TaggedError("FileWriteRefused")<{
  readonly reason: "deny-rule" | "asks-first"
  readonly operation: string
}> {}

/** More than 8 file-write cards of one surface wait in one conversation: nothing asked, nothing written. */
export class ApprovalsPending extends Data.TaggedError("ApprovalsPending")<{
  readonly surface: string
  readonly limit: number
}> {}

export type ArtifactError =
  | ArtifactNotFound
  | ArtifactNotFinalized
  | ArtifactNotCreator
  | ArtifactStorageFull
  | ArtifactWriteRefused
  | InstanceUnknown
  | FileWriteRefused
  | ApprovalsPending
