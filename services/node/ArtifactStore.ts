/**
 * Conversation artifacts: metadata in the node's database, bytes in files
 * under `<dataDir>/artifacts/`, all of them counted against one storage quota.
 * Only finalized files written whole exist so far (fetched media); the
 * widget write-and-finalize flow builds on the same table later.
 */
import { Context, Data, type Effect, type Option } from "effect"
import type { ArtifactKind, ArtifactRef, ArtifactState } from "../../schema/node/Artifact.js"

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

export class ArtifactStore extends Context.Tag("clark/node/ArtifactStore")<ArtifactStore, {
  /**
   * Stores a finalized artifact: the bytes durably on disk, then the row. On
   * any failure nothing is left behind (no row, no file, no temporary file).
   */
  readonly create: (
    artifact: NewArtifact
  ) => Effect.Effect<StoredArtifact, ArtifactQuotaExceeded | ArtifactTooLarge | ConversationNotFound>
  readonly get: (artifactId: string) => Effect.Effect<Option.Option<StoredArtifact>>
  /** The bytes of a finalized artifact. */
  readonly read: (artifactId: string) => Effect.Effect<Option.Option<Uint8Array>>
  readonly usage: Effect.Effect<{ readonly usedBytes: number; readonly quotaBytes: number }>
}>() {}
