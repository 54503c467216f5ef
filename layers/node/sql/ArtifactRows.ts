/** Artifact rows as the store reads and writes them, and who a widget file belongs to. */
import type { ArtifactKind, ArtifactState } from "../../../schema/node/Artifact.js"
import type { StoredArtifact, WidgetOwner } from "../../../services/node/ArtifactStore.js"

export type Row = Record<string, unknown>

export const toArtifact = (row: Row): StoredArtifact => ({
  artifactId: String(row.id),
  conversationId: String(row.conversationId),
  kind: String(row.kind) as ArtifactKind,
  mimeType: String(row.mimeType),
  name: String(row.name),
  sizeBytes: Number(row.sizeBytes),
  sha256: String(row.sha256 ?? ""),
  state: String(row.state) as ArtifactState,
  createdAt: String(row.createdAt),
  instanceId: row.instanceId === null || row.instanceId === undefined ? null : String(row.instanceId),
  packageId: row.packageId === null || row.packageId === undefined ? null : String(row.packageId),
  writtenAt: String(row.writtenAt ?? row.updatedAt)
})

/** The widget made this file. */
export const madeBy = (artifact: StoredArtifact, owner: WidgetOwner) =>
  artifact.kind === "widget" && handedTo(artifact, owner)

export const handedTo = (artifact: StoredArtifact, owner: WidgetOwner) =>
  artifact.conversationId === owner.conversationId && artifact.instanceId === owner.instanceId &&
  artifact.packageId === owner.packageId

export const rowOf = (artifact: StoredArtifact) => ({
  id: artifact.artifactId,
  conversationId: artifact.conversationId,
  instanceId: artifact.instanceId,
  packageId: artifact.packageId,
  kind: artifact.kind,
  mimeType: artifact.mimeType,
  name: artifact.name,
  sizeBytes: artifact.sizeBytes,
  sha256: artifact.state === "finalized" ? artifact.sha256 : null,
  state: artifact.state,
  createdAt: artifact.createdAt,
  updatedAt: artifact.writtenAt,
  writtenAt: artifact.writtenAt
})
