/**
 * MachineFileWrites over the execution policy, task approvals (the file cards), the audit log and two pieces of
 * memory: the waiting cards of each surface in each conversation (the spec keeps that count in memory, so a
 * restart resets it) and the write rights (15 minutes, so a restart ending them only makes a client ask again).
 * Who started a file is stored (`artifact_starters`): it decides whether a discard is destructive.
 */
import { SqlClient } from "@effect/sql"
import { Clock, DateTime, Duration, Effect, Layer, Option, Ref, Schema } from "effect"
import { DenyRules, MachineTurns } from "../../../schema/node/Preferences.js"
import type { Caller } from "../../../schema/node/Security.js"
import { makeId } from "../../../services/common/Ids.js"
import { ApprovalsPending, FileWriteRefused } from "../../../services/node/ArtifactErrors.js"
import { ArtifactStore } from "../../../services/node/ArtifactStore.js"
import { AuditLog } from "../../../services/node/AuditLog.js"
import {
  askerOf,
  type CardInput,
  cardDigest,
  cardLifetime,
  cardTool,
  isCard,
  maxWaitingCards,
  type Right,
  riskOf,
  rightCovers,
  verdictOf,
  writeRight
} from "../../../services/node/FileWriteRules.js"
import { type Clearance, MachineFileWrites, type WriteRequest } from "../../../services/node/MachineFileWrites.js"
import { PreferenceStore } from "../../../services/node/PreferenceStore.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"

const iso = (millis: number) => DateTime.formatIso(DateTime.unsafeMake(millis))
const run = (granted: boolean): Clearance => ({ _tag: "Run", granted })
const Starter = Schema.Array(Schema.Struct({ asker: Schema.String }))

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const approvals = yield* TaskApprovals
  const preferences = yield* PreferenceStore
  const audit = yield* AuditLog
  const store = yield* ArtifactStore
  /** Waiting cards by `surface|conversation`: approval id → when it expires (epoch ms). */
  const waiting = yield* Ref.make(new Map<string, ReadonlyMap<string, number>>())
  const rights = yield* Ref.make(new Map<string, Right>())
  // Finding the waiting card and asking a new one are one step, so two identical asks make one card.
  const asking = yield* Effect.makeSemaphore(1)

  const preference = <A, I>(key: string, schema: Schema.Schema<A, I>, fallback: A) =>
    Effect.map(preferences.get(key), (state) =>
      Option.getOrElse(Option.flatMap(state, (s) => Schema.decodeUnknownOption(schema)(s.value)), () => fallback))

  const record = (caller: Caller, request: WriteRequest, kind: string, detail: Record<string, unknown>) =>
    audit.append({
      kind: `artifact.${kind}`,
      conversationId: request.owner.conversationId,
      surface: caller.surface,
      channel: caller.channel,
      detail: {
        instanceId: request.owner.instanceId,
        packageId: request.owner.packageId,
        operation: request.operation,
        ...(request.artifactId === null ? {} : { artifactId: request.artifactId }),
        ...(caller.connection === undefined ? {} : { connection: caller.connection }),
        ...detail
      }
    })

  const startedBy = (artifactId: string) =>
    sql`SELECT asker FROM artifact_starters WHERE artifact_id = ${artifactId}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Starter)),
      Effect.map((rows) => rows[0]?.asker ?? null),
      Effect.orDie
    )

  /** The file as the discard rule needs it; null when it is not this widget's (the store then refuses the write). */
  const fileOf = (request: WriteRequest) =>
    Effect.gen(function*() {
      if (request.artifactId === null) return null
      const found = yield* store.get(request.artifactId)
      if (Option.isNone(found)) return null
      const file = found.value
      if (file.conversationId !== request.owner.conversationId || file.instanceId !== request.owner.instanceId) return null
      return { state: file.state, startedBy: yield* startedBy(file.artifactId) }
    })

  const countKey = (caller: Caller, conversationId: string) => `${caller.surface}|${conversationId}`

  /** The waiting card for exactly this, or a new one; past 8 waiting from this surface here: 429, nothing asked. */
  const ask = (caller: Caller, request: WriteRequest, card: CardInput, digest: string, risk: "local-write" | "destructive") =>
    asking.withPermits(1)(Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const same = (yield* approvals.waiting).find((a) =>
        a.conversationId === request.owner.conversationId && a.operationDigest === digest && a.expiresAt > iso(now)
      )
      if (same !== undefined) return same.approvalId
      const key = countKey(caller, request.owner.conversationId)
      const live = [...((yield* Ref.get(waiting)).get(key) ?? new Map<string, number>())].filter(([, until]) => until > now)
      if (live.length >= maxWaitingCards) {
        yield* record(caller, request, "write-refused", { reason: "approvals-pending", limit: maxWaitingCards })
        return yield* new ApprovalsPending({ surface: caller.surface, limit: maxWaitingCards })
      }
      const approvalId = yield* makeId("tap")
      const expires = now + Duration.toMillis(cardLifetime)
      yield* approvals.insert({
        approvalId,
        // A file card belongs to no turn: its "task" is the widget whose file it is (GET /work lists turns).
        taskId: request.owner.instanceId,
        conversationId: request.owner.conversationId,
        origin: caller.surface,
        packageId: request.owner.packageId,
        packageDigest: request.packageDigest,
        tool: cardTool(request.operation),
        risk,
        input: card,
        operationDigest: digest,
        status: "asked",
        requestedAt: iso(now),
        expiresAt: iso(expires),
        decidedAt: null,
        continuedAs: null
      })
      yield* Ref.update(waiting, (all) => new Map(all).set(key, new Map([...live, [approvalId, expires] as const])))
      yield* record(caller, request, "write-approval-asked", { approvalId, operationDigest: digest })
      return approvalId
    }))

  const clear = (caller: Caller, request: WriteRequest): Effect.Effect<Clearance, FileWriteRefused | ApprovalsPending> =>
    Effect.gen(function*() {
      if (caller.surface === "person") return run(false)
      const asker = askerOf(caller)
      const file = yield* fileOf(request)
      // A write, attach or discard of a file that is not this widget's is the store's to refuse (404 or 403).
      if (request.artifactId !== null && file === null) return run(false)
      // So is a chunk or finalize of a finalized file (400 `finalized`, or the file as it is): nothing to ask.
      if (request.operation === "write" && file?.state === "finalized") return run(false)
      const risk = riskOf(request.operation, file, asker)
      const policy = {
        machineTurns: yield* preference("execution.machineTurns", MachineTurns, "default"),
        denyRules: yield* preference("execution.denyRules", DenyRules, [])
      }
      const step = { origin: caller.surface, packageId: request.owner.packageId, operation: request.operation, risk }
      const verdict = verdictOf(step, { ...policy, granted: false })
      if (verdict._tag === "Deny") {
        yield* record(caller, request, "write-refused", { reason: "deny-rule" })
        return yield* new FileWriteRefused({ reason: "deny-rule", operation: cardTool(request.operation) })
      }
      if (verdict._tag === "Run") return run(false)
      const now = yield* Clock.currentTimeMillis
      if (request.artifactId !== null) {
        const right = (yield* Ref.get(rights)).get(request.artifactId)
        if (rightCovers(right, asker, now, request.operation, risk)) return run(false)
      }
      const card: CardInput = {
        kind: "widget-file-write",
        version: 1,
        operation: request.operation,
        instanceId: request.owner.instanceId,
        artifactId: request.artifactId,
        mimeType: request.operation === "create" ? request.mimeType ?? null : null,
        name: request.operation === "create" ? request.name ?? null : null,
        asker
      }
      const digest = cardDigest(request.owner.conversationId, card)
      // A granted card is spent by the first write it covers; write access becomes the file's write right.
      const granted = yield* approvals.grantedFor(request.owner.conversationId, digest)
      if (Option.isSome(granted) && (yield* approvals.transition(granted.value.approvalId, ["granted"], "used", iso(now)))) {
        if (request.operation === "write" && request.artifactId !== null) yield* grantRight(request.artifactId, asker, now)
        return run(true)
      }
      const approvalId = yield* ask(caller, request, card, digest, risk === "destructive" ? risk : "local-write")
      const asked: Clearance = { _tag: "Ask", approvalId }
      return asked
    })

  const grantRight = (artifactId: string, asker: string, from: number) =>
    Ref.update(rights, (all) => new Map(all).set(artifactId, { asker, until: from + Duration.toMillis(writeRight) }))

  return MachineFileWrites.of({
    clear,
    created: (caller, artifactId, granted) =>
      Effect.gen(function*() {
        if (caller.surface === "person") return
        yield* sql`INSERT INTO artifact_starters ${sql.insert({ artifactId, asker: askerOf(caller) })}`.pipe(Effect.orDie)
        if (granted) yield* grantRight(artifactId, askerOf(caller), yield* Clock.currentTimeMillis)
      }),
    ended: (artifactId) =>
      Ref.update(rights, (all) => {
        const next = new Map(all)
        next.delete(artifactId)
        return next
      }),
    decided: (approval) =>
      Effect.gen(function*() {
        if (!isCard(approval)) return
        yield* Ref.update(waiting, (all) => {
          const next = new Map<string, ReadonlyMap<string, number>>()
          for (const [key, cards] of all) next.set(key, new Map([...cards].filter(([id]) => id !== approval.approvalId)))
          return next
        })
        const card = approval.input as CardInput
        if (approval.status !== "granted" || card.operation !== "write" || card.artifactId === null) return
        // Write access starts its right when the person approves it; the card is spent by that.
        const at = approval.decidedAt === null ? yield* Clock.currentTimeMillis : Date.parse(approval.decidedAt)
        if (yield* approvals.transition(approval.approvalId, ["granted"], "used", iso(at))) {
          yield* grantRight(card.artifactId, card.asker, at)
        }
      })
  })
})

export const layer = Layer.effect(MachineFileWrites, make)
