/**
 * The widget-prefixed artifact routes (spec, "Widget routes", "Artifact grants"): a widget reads, writes,
 * finalizes, attaches and discards files by ref. The widget is its instance in the named conversation; one that
 * is not there is 404 INSTANCE_UNKNOWN before anything else is looked at. The store checks what the widget may
 * do with each file (its own, or handed to it within the grant's 24 hours).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { maxChunkBytes } from "../../../schema/node/Artifact.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { ArtifactWriteRefused, InstanceUnknown } from "../../../services/node/ArtifactErrors.js"
import { accepts, sanitizeName } from "../../../services/node/ArtifactRules.js"
import { ArtifactStore, artifactRef, type WidgetOwner } from "../../../services/node/ArtifactStore.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import type { FileOperation } from "../../../services/node/FileWriteRules.js"
import { MachineFileWrites } from "../../../services/node/MachineFileWrites.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { wire } from "../http/Errors.js"

const fromBase64 = (text: string) => {
  const buffer = Buffer.from(text, "base64")
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** A widget as its file routes know it: its files' owner and the content digest a card shows. */
interface Widget {
  readonly owner: WidgetOwner
  readonly contentDigest: string
}

export const WidgetArtifactsLive = HttpApiBuilder.group(NodeApi, "widgetArtifacts", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ArtifactStore
    const instances = yield* WidgetInstances
    const audit = yield* AuditLog
    const writes = yield* MachineFileWrites

    /**
     * A machine surface's file write goes through the person's execution policy (MachineFileWrites): it runs,
     * is refused (403 POLICY_REFUSED, 429 APPROVALS_PENDING) or gets its file's approval card (202, nothing
     * written). The person's own writes always run.
     */
    const cleared = (
      widget: Widget,
      operation: FileOperation,
      artifactId: string | null,
      create?: { readonly mimeType: string; readonly name: string }
    ) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        writes.clear(caller, {
          owner: widget.owner,
          packageDigest: widget.contentDigest,
          operation,
          artifactId,
          mimeType: create?.mimeType,
          name: create?.name
        }))

    const approvalRequired = (approvalId: string) => ({
      outcome: "approval-required" as const,
      approvalRequired: { approvalId }
    })

    const widgetOf = (conversationId: string, instanceId: string) =>
      Effect.flatMap(
        instances.get(conversationId, instanceId),
        Option.match({
          onNone: () => Effect.fail(new InstanceUnknown({ instanceId })),
          onSome: (instance): Effect.Effect<Widget> =>
            Effect.succeed({
              owner: { conversationId, instanceId, packageId: instance.packageId },
              contentDigest: instance.contentDigest
            })
        })
      )
    const ownerOf = (conversationId: string, instanceId: string) =>
      Effect.map(widgetOf(conversationId, instanceId), (widget) => widget.owner)

    /** A conversation deleted between the instance lookup and the write: the instance went with it. */
    const gone = (owner: WidgetOwner) => () =>
      Effect.fail(new InstanceUnknown({ instanceId: owner.instanceId }))

    /** Every file write is audited with its surface, never with bytes. */
    const record = (owner: WidgetOwner, operation: string, detail: Record<string, unknown>) =>
      Effect.flatMap(CurrentCaller, (caller) =>
        audit.append({
          kind: `artifact.${operation}`,
          conversationId: owner.conversationId,
          surface: caller.surface,
          channel: caller.channel,
          detail: {
            instanceId: owner.instanceId,
            packageId: owner.packageId,
            ...(caller.connection === undefined ? {} : { connection: caller.connection }),
            ...detail
          }
        }))

    return handlers
      .handle("read", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const owner = yield* ownerOf(path.id, path.instanceId)
          const chunk = yield* store.readFor(owner, path.artifactId, urlParams.offset ?? 0, urlParams.length ?? maxChunkBytes)
          return {
            artifactRef: artifactRef(chunk.artifact),
            offset: chunk.offset,
            eof: chunk.eof,
            contentBase64: Buffer.from(chunk.bytes).toString("base64")
          }
        }).pipe(wire))
      .handle("create", ({ path, payload }) =>
        Effect.gen(function*() {
          const widget = yield* widgetOf(path.id, path.instanceId)
          const owner = widget.owner
          const file = { mimeType: payload.mimeType, name: sanitizeName(payload.name, payload.mimeType) }
          const clearance = yield* cleared(widget, "create", null, file)
          if (clearance._tag === "Ask") return approvalRequired(clearance.approvalId)
          const artifact = yield* store.begin(owner, file).pipe(Effect.catchTag("ConversationNotFound", gone(owner)))
          yield* writes.created(yield* CurrentCaller, artifact.artifactId, clearance.granted)
          yield* record(owner, "created", { artifactId: artifact.artifactId, mimeType: artifact.mimeType })
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("pick", ({ path, payload }) =>
        Effect.gen(function*() {
          const owner = yield* ownerOf(path.id, path.instanceId)
          if (!accepts(payload.accept, payload.name, payload.mimeType)) {
            return yield* new ArtifactWriteRefused({ artifactId: null, problem: "not-accepted" })
          }
          const artifact = yield* store.pick(owner, {
            name: payload.name,
            mimeType: payload.mimeType,
            bytes: fromBase64(payload.contentBase64)
          }).pipe(Effect.catchTag("ConversationNotFound", gone(owner)))
          yield* record(owner, "picked", { artifactId: artifact.artifactId, sizeBytes: artifact.sizeBytes })
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("writeChunk", ({ path, payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const bytes = payload.contentBase64
          // The person's writes always run (MachineFileWrites.clear asks nothing of them) and are not audited per
          // chunk (a row covers a file), so the store reads the widget's instance with the file: one read per chunk.
          if (caller.surface === "person") {
            const artifact = yield* store.appendAt(
              { conversationId: path.id, instanceId: path.instanceId },
              path.artifactId,
              payload.offset,
              bytes
            )
            return { artifactRef: artifactRef(artifact) }
          }
          const widget = yield* widgetOf(path.id, path.instanceId)
          const clearance = yield* cleared(widget, "write", path.artifactId)
          if (clearance._tag === "Ask") return approvalRequired(clearance.approvalId)
          const artifact = yield* store.append(widget.owner, path.artifactId, payload.offset, bytes)
          // A machine surface's every write is audited, without bytes.
          yield* record(widget.owner, "chunk-written", { artifactId: path.artifactId, offset: payload.offset, lengthBytes: bytes.length })
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("finalize", ({ path }) =>
        Effect.gen(function*() {
          const widget = yield* widgetOf(path.id, path.instanceId)
          const owner = widget.owner
          const clearance = yield* cleared(widget, "write", path.artifactId)
          if (clearance._tag === "Ask") return approvalRequired(clearance.approvalId)
          const artifact = yield* store.finalize(owner, path.artifactId)
          yield* writes.ended(path.artifactId)
          yield* record(owner, "finalized", { artifactId: artifact.artifactId, sizeBytes: artifact.sizeBytes })
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("attach", ({ path, payload }) =>
        Effect.gen(function*() {
          const widget = yield* widgetOf(path.id, path.instanceId)
          const owner = widget.owner
          const clearance = yield* cleared(widget, "attach", path.artifactId)
          if (clearance._tag === "Ask") return approvalRequired(clearance.approvalId)
          const attached = yield* store.attach(owner, path.artifactId, payload.name)
          yield* record(owner, "attached", { artifactId: path.artifactId, attachmentId: attached.attachmentRef.attachmentId })
          return { artifactRef: artifactRef(attached.artifact), attachmentRef: attached.attachmentRef }
        }).pipe(wire))
      .handle("discard", ({ path }) =>
        Effect.gen(function*() {
          const widget = yield* widgetOf(path.id, path.instanceId)
          const owner = widget.owner
          const clearance = yield* cleared(widget, "discard", path.artifactId)
          if (clearance._tag === "Ask") return approvalRequired(clearance.approvalId)
          yield* store.discard(owner, path.artifactId)
          yield* writes.ended(path.artifactId)
          yield* record(owner, "discarded", { artifactId: path.artifactId })
          return { discarded: true as const, artifactId: path.artifactId }
        }).pipe(wire))
  }))
