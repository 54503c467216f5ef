/**
 * The artifact routes outside a widget prefix (spec, "Widget routes"): an artifact with its ref, the bytes of a
 * finished file, and the person's Save As. Bytes are never sent to a machine surface, and never as something a
 * browser would run: the node's own origin serves them.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { encodeExtended, create as contentDisposition } from "content-disposition"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { PersonOnlyRefused } from "../../../services/node/AccessErrors.js"
import { ArtifactNotFinalized, ArtifactNotFound } from "../../../services/node/ArtifactErrors.js"
import { sanitizeName } from "../../../services/node/ArtifactRules.js"
import { ArtifactStore, artifactRef, type StoredArtifact } from "../../../services/node/ArtifactStore.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { wire } from "../http/Errors.js"

/** Bytes as data: never sniffed into something else, never run as a page of the node's origin. */
const bytesHeaders = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; sandbox",
  "cache-control": "private, no-store"
}

/** RFC 6266: `filename` (an ASCII fallback) and `filename*` (the name in UTF-8), always both. */
export const attachmentHeader = (name: string): string => {
  const header = contentDisposition(name, { type: "attachment" })
  return header.includes("filename*=") ? header : `${header}; filename*=${encodeExtended(name)}`
}

export const ArtifactsLive = HttpApiBuilder.group(NodeApi, "artifacts", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ArtifactStore
    const audit = yield* AuditLog

    const found = (artifactId: string) =>
      Effect.flatMap(
        store.get(artifactId),
        Option.match({ onNone: () => Effect.fail(new ArtifactNotFound({ artifactId })), onSome: Effect.succeed })
      )

    const finished = (artifactId: string) =>
      Effect.gen(function*() {
        const artifact = yield* found(artifactId)
        if (artifact.state !== "finalized") return yield* new ArtifactNotFinalized({ artifactId })
        const bytes = yield* store.read(artifactId)
        // Removed between the two reads (a discard, a conversation deleted).
        if (Option.isNone(bytes)) return yield* new ArtifactNotFound({ artifactId })
        return { artifact, bytes: bytes.value }
      })

    const describe = (artifact: StoredArtifact) => ({
      artifactRef: artifactRef(artifact),
      state: artifact.state,
      conversationId: artifact.conversationId,
      instanceId: artifact.instanceId,
      createdAt: artifact.createdAt,
      updatedAt: artifact.writtenAt
    })

    return handlers
      .handle("get", ({ path }) => wire(Effect.map(found(path.artifactId), describe)))
      .handle("content", ({ path }) =>
        Effect.gen(function*() {
          // Machine clients read refs, never bytes (spec, "Long-running package jobs").
          const caller = yield* CurrentCaller
          if (caller.surface !== "person") return yield* new PersonOnlyRefused({ surface: caller.surface })
          const { artifact, bytes } = yield* finished(path.artifactId)
          return HttpServerResponse.uint8Array(bytes, { contentType: artifact.mimeType, headers: bytesHeaders })
        }).pipe(wire))
      .handle("export", ({ path, payload }) =>
        Effect.gen(function*() {
          const { artifact, bytes } = yield* finished(path.artifactId)
          const name = sanitizeName(payload.suggestedName ?? artifact.name, artifact.mimeType)
          const caller = yield* CurrentCaller
          yield* audit.append({
            kind: "artifact.exported",
            conversationId: artifact.conversationId,
            surface: caller.surface,
            channel: caller.channel,
            detail: { artifactId: artifact.artifactId, sizeBytes: artifact.sizeBytes }
          })
          return HttpServerResponse.uint8Array(bytes, {
            contentType: artifact.mimeType,
            headers: { ...bytesHeaders, "content-disposition": attachmentHeader(name) }
          })
        }).pipe(wire))
  }))
