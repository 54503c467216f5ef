/**
 * Conversation artifacts: metadata in the node's database, bytes in files
 * under `<dataDir>/artifacts/`, all of them counted against one storage quota.
 * Files written whole (fetched media, picked files) are finalized at once; a
 * widget's own file is begun empty, grows by chunks appended at its end and is
 * finalized once its bytes are checked against its declared type (spec, "Artifact").
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { ArtifactKind, ArtifactRef, ArtifactState, AttachmentRef as AttachmentRefSchema } from "../../schema/node/Artifact.js"

type AttachmentRef = typeof AttachmentRefSchema.Type
import type {
  ArtifactNotCreator,
  ArtifactNotFinalized,
  ArtifactNotFound,
  ArtifactStorageFull,
  ArtifactWriteRefused,
  InstanceUnknown
} from "./ArtifactErrors.js"

/** Default storage for all conversation artifacts together (the spec's 1 GiB share). */
export const defaultQuotaBytes = 1024 * 1024 * 1024

export interface StoredArtifact {
  readonly artifactId: string
  readonly conversationId: string
  readonly kind: ArtifactKind
  readonly mimeType: string
  readonly name: string
  readonly sizeBytes: number
  /** Lowercase hex SHA-256 of the bytes. */
  readonly sha256: string
  readonly state: ArtifactState
  readonly createdAt: string
  /** The widget that made the file or was handed it; null for media and job files. */
  readonly instanceId: string | null
  readonly packageId: string | null
  /** The pick or the last write (grants and the removal of unfinished files run from it). */
  readonly writtenAt: string
}

/** A widget as files know it: its instance in its conversation, placed from its package. */
export interface WidgetOwner {
  readonly conversationId: string
  readonly instanceId: string
  readonly packageId: string
}

/** Where a widget is: its instance in a conversation; the store looks up the package it was placed from. */
export type WidgetPlace = Pick<WidgetOwner, "conversationId" | "instanceId">

/** A widget's bytes read back: `eof` when the read reached the end of the file. */
export interface ReadChunk {
  readonly artifact: StoredArtifact
  readonly offset: number
  readonly bytes: Uint8Array
  readonly eof: boolean
}

export interface NewArtifact {
  readonly conversationId: string
  readonly kind: ArtifactKind
  readonly mimeType: string
  readonly name: string
  readonly bytes: Uint8Array
}

export class ArtifactQuotaExceeded extends Data.TaggedError("ArtifactQuotaExceeded")<{
  readonly sizeBytes: number
  readonly usedBytes: number
  readonly quotaBytes: number
}> {}

/** Larger than the spec's 25 MiB per file. */
export class ArtifactTooLarge extends Data.TaggedError("ArtifactTooLarge")<{
  readonly sizeBytes: number
  readonly maxBytes: number
}> {}

export class ConversationNotFound extends Data.TaggedError("ConversationNotFound")<{
  readonly conversationId: string
}> {}

export const artifactRef = (artifact: StoredArtifact): ArtifactRef => ({
  v: 1,
  artifactId: artifact.artifactId,
  kind: artifact.kind,
  mimeType: artifact.mimeType,
  sizeBytes: artifact.sizeBytes,
  name: artifact.name,
  ...(artifact.state === "finalized" ? { digest: `sha256:${artifact.sha256}` } : {})
})

export const attachmentRef = (artifact: StoredArtifact, attachment: { readonly attachmentId: string; readonly name: string }): AttachmentRef => ({
  attachmentId: attachment.attachmentId,
  name: attachment.name,
  mimeType: artifact.mimeType,
  sizeBytes: artifact.sizeBytes
})

export class ArtifactStore extends Context.Tag("clark/node/ArtifactStore")<ArtifactStore, {
  /**
   * Stores a finalized artifact: the bytes durably on disk, then the row. On
   * any failure nothing is left behind (no row, no file, no temporary file).
   */
  readonly create: (
    artifact: NewArtifact
  ) => Effect.Effect<StoredArtifact, ArtifactQuotaExceeded | ArtifactTooLarge | ConversationNotFound>
  /** An unfinished file past its 24 hours is removed here and answered as none. */
  readonly get: (artifactId: string) => Effect.Effect<Option.Option<StoredArtifact>>
  /** The bytes of a finalized artifact. */
  readonly read: (artifactId: string) => Effect.Effect<Option.Option<Uint8Array>>
  readonly usage: Effect.Effect<{ readonly usedBytes: number; readonly quotaBytes: number }>

  /** A new, empty, unfinished file of this widget; refused once the widget holds its 128 MiB. */
  readonly begin: (
    owner: WidgetOwner,
    file: { readonly mimeType: string; readonly name: string }
  ) => Effect.Effect<StoredArtifact, ArtifactStorageFull | ConversationNotFound>
  /** Appends a chunk at `offset`, which must be where the file ends; durable before it answers. */
  readonly append: (
    owner: WidgetOwner,
    artifactId: string,
    offset: number,
    bytes: Uint8Array
  ) => Effect.Effect<StoredArtifact, ArtifactNotFound | ArtifactWriteRefused | ArtifactStorageFull>
  /**
   * `append` for a caller that has not looked the widget up: its instance is read in the same statement as the
   * file and the storage in use; a widget not in the conversation is InstanceUnknown before anything else.
   */
  readonly appendAt: (
    widget: WidgetPlace,
    artifactId: string,
    offset: number,
    bytes: Uint8Array
  ) => Effect.Effect<StoredArtifact, InstanceUnknown | ArtifactNotFound | ArtifactWriteRefused | ArtifactStorageFull>
  /** Checks the bytes against the declared type and fixes them; a finalized file is answered as it is. */
  readonly finalize: (
    owner: WidgetOwner,
    artifactId: string
  ) => Effect.Effect<StoredArtifact, ArtifactNotFound | ArtifactWriteRefused>
  /** A file the person chose, handed to this widget (not counted against the widget's own storage). */
  readonly pick: (
    owner: WidgetOwner,
    file: { readonly name: string; readonly mimeType: string; readonly bytes: Uint8Array }
  ) => Effect.Effect<StoredArtifact, ArtifactStorageFull | ArtifactWriteRefused | ConversationNotFound>
  /** At most `length` bytes from `offset` of a finalized file this widget may read. */
  readonly readFor: (
    owner: WidgetOwner,
    artifactId: string,
    offset: number,
    length: number
  ) => Effect.Effect<ReadChunk, ArtifactNotFound | ArtifactNotFinalized>
  /** The file's attachment: made by the first attach (which decides the name), the same one after. */
  readonly attach: (
    owner: WidgetOwner,
    artifactId: string,
    name: string | undefined
  ) => Effect.Effect<
    { readonly artifact: StoredArtifact; readonly attachmentRef: AttachmentRef },
    ArtifactNotFound | ArtifactNotFinalized
  >
  /** Removes a file this widget made (its row, its bytes, its attachment). */
  readonly discard: (
    owner: WidgetOwner,
    artifactId: string
  ) => Effect.Effect<StoredArtifact, ArtifactNotFound | ArtifactNotCreator>
  /** Removes every unfinished file last written 24 hours ago or more; answers how many. */
  readonly sweep: Effect.Effect<number>
}>() {}
