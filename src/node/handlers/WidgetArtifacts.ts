/**
 * The widget-prefixed artifact routes (spec, "Widget routes", "Artifact grants"): a widget reads, writes,
 * finalizes, attaches and discards files by ref. The widget is its instance in the named conversation; one that
 * is not there is 404 INSTANCE_UNKNOWN before anything else is looked at. The store checks what the widget may
 * do with each file (its own, or handed to it within the grant's 24 hours).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { NodeApi } from "../../../schema/node/Api.js"
import { maxChunkBytes } from "../../../schema/node/Artifact.js"
import type { RiskClass } from "../../../schema/node/Manifest.js"
import { DenyRules, MachineTurns } from "../../../schema/node/Preferences.js"
import { CurrentCaller } from "../../../schema/node/Security.js"
import { ArtifactWriteRefused, FileWriteRefused, InstanceUnknown } from "../../../services/node/ArtifactErrors.js"
import { accepts, sanitizeName } from "../../../services/node/ArtifactRules.js"
import { ArtifactStore, artifactRef, type WidgetOwner } from "../../../services/node/ArtifactStore.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { decide } from "../../../services/node/ExecutionPolicy.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { wire } from "../http/Errors.js"

const fromBase64 = (text: string) => {
  const buffer = Buffer.from(text, "base64")
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

export const WidgetArtifactsLive = HttpApiBuilder.group(NodeApi, "widgetArtifacts", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ArtifactStore
    const instances = yield* WidgetInstances
    const audit = yield* AuditLog
    const preferences = yield* PreferenceStore

    const preference = <A, I>(key: string, schema: Schema.Schema<A, I>, fallback: A) =>
      Effect.map(preferences.get(key), (state) =>
        Option.getOrElse(Option.flatMap(state, (s) => Schema.decodeUnknownOption(schema)(s.value)), () => fallback))

    /**
     * A machine surface's file write goes through the person's execution policy (spec, "Machine-surface widget
     * file writes"): a write is local-write, a discard destructive (who started an unfinished file is not
     * recorded, so every machine discard counts as destructive). Asking needs approval cards, not built yet: a
     * write the policy would ask about is refused, and nothing is written.
     */
    const policy = (owner: WidgetOwner, operation: string, risk: RiskClass) =>
      Effect.gen(function*() {
        const caller = yield* CurrentCaller
        if (caller.surface === "person") return
        const verdict = decide(
          { origin: caller.surface, packageId: owner.packageId, tool: `artifacts.${operation}`, risk },
          {
            machineTurns: yield* preference("execution.machineTurns", MachineTurns, "default"),
            denyRules: yield* preference("execution.denyRules", DenyRules, []),
            granted: false
          }
        )
        if (verdict._tag === "Run") return
        const reason = verdict._tag === "Deny" ? "deny-rule" as const : "asks-first" as const
        yield* record(owner, "write-refused", { operation, reason })
        return yield* new FileWriteRefused({ reason, operation: `artifacts.${operation}` })
      })

    const ownerOf = (conversationId: string, instanceId: string) =>
      Effect.flatMap(
        instances.get(conversationId, instanceId),
        Option.match({
          onNone: () => Effect.fail(new InstanceUnknown({ instanceId })),
          onSome: (instance): Effect.Effect<WidgetOwner> =>
            Effect.succeed({ conversationId, instanceId, packageId: instance.packageId })
        })
      )

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
          detail: { instanceId: owner.instanceId, packageId: owner.packageId, ...detail }
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
          const owner = yield* ownerOf(path.id, path.instanceId)
          yield* policy(owner, "create", "local-write")
          const artifact = yield* store.begin(owner, {
            mimeType: payload.mimeType,
            name: sanitizeName(payload.name, payload.mimeType)
          }).pipe(Effect.catchTag("ConversationNotFound", gone(owner)))
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
          const owner = yield* ownerOf(path.id, path.instanceId)
          yield* policy(owner, "chunks", "local-write")
          const artifact = yield* store.append(owner, path.artifactId, payload.offset, payload.contentBase64)
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("finalize", ({ path }) =>
        Effect.gen(function*() {
          const owner = yield* ownerOf(path.id, path.instanceId)
          yield* policy(owner, "finalize", "local-write")
          const artifact = yield* store.finalize(owner, path.artifactId)
          yield* record(owner, "finalized", { artifactId: artifact.artifactId, sizeBytes: artifact.sizeBytes })
          return { artifactRef: artifactRef(artifact) }
        }).pipe(wire))
      .handle("attach", ({ path, payload }) =>
        Effect.gen(function*() {
          const owner = yield* ownerOf(path.id, path.instanceId)
          yield* policy(owner, "attach", "local-write")
          const attached = yield* store.attach(owner, path.artifactId, payload.name)
          yield* record(owner, "attached", { artifactId: path.artifactId, attachmentId: attached.attachmentRef.attachmentId })
          return { artifactRef: artifactRef(attached.artifact), attachmentRef: attached.attachmentRef }
        }).pipe(wire))
      .handle("discard", ({ path }) =>
        Effect.gen(function*() {
          const owner = yield* ownerOf(path.id, path.instanceId)
          yield* policy(owner, "discard", "destructive")
          yield* store.discard(owner, path.artifactId)
          yield* record(owner, "discarded", { artifactId: path.artifactId })
          return { discarded: true as const, artifactId: path.artifactId }
        }).pipe(wire))
  }))
