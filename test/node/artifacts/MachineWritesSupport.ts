/** Helpers of the machine-surface file write tests (MachineWrites.test.ts): a widget, callers, cards, rows. */
import { Context, Effect, Option } from "effect"
import { AuditLog } from "../../../services/node/AuditLog.js"
import { TaskApprovals } from "../../../services/node/TaskApprovals.js"
import { WidgetInstances } from "../../../services/node/WidgetInstances.js"
import { query } from "../../support/NodeFixtures.js"
import * as NodeServer from "../../support/NodeServer.js"
import { TestNode } from "../../support/NodeServer.js"

export const withNode = <A, E, R>(effect: Effect.Effect<A, E, R>, dataDir?: string) =>
  Effect.provide(effect, NodeServer.layer({ model: "none", ...(dataDir === undefined ? {} : { dataDir }) }))

export const b64 = (text: string) => Buffer.from(text).toString("base64")

export const service = <I, S>(tag: Context.Tag<I, S>) => Effect.map(TestNode, (node) => Context.get(node.services as Context.Context<I>, tag))

/** A widget of @clark/notes placed in the conversation; its routes' prefix and instance id. */
export const widget = (conversationId: string) =>
  Effect.gen(function*() {
    const instances = yield* service(WidgetInstances)
    const placed = yield* instances.place({
      conversationId,
      packageId: "@clark/notes",
      version: "1.0.0",
      contentDigest: "sha256:0",
      widgetId: "board",
      props: {},
      bindings: [],
      offeredActions: [],
      taskId: null
    })
    return { instanceId: placed.instanceId, files: `/conversations/${conversationId}/widgets/${placed.instanceId}/artifacts` }
  })

export const cli = (method: string, path: string, body?: unknown) =>
  Effect.flatMap(TestNode, (node) => node.request(method, path, { as: "cli-api", ...(body === undefined ? {} : { body }) }))
export const person = (method: string, path: string, body?: unknown) =>
  Effect.flatMap(TestNode, (node) => node.request(method, path, body === undefined ? {} : { body }))

export const askFirst = Effect.flatMap(person("PUT", "/preferences/execution.machineTurns", { value: "ask" }), (r) =>
  r.status === 200 ? Effect.void : Effect.dieMessage(`machineTurns not set: ${r.status}`))

export const card = (approvalId: string) =>
  Effect.flatMap(service(TaskApprovals), (approvals) => Effect.map(approvals.get(approvalId), Option.getOrThrow))

/** The person decides a file card on the task-approval route, with the digest the inbox shows. */
export const decide = (approvalId: string, decision: "granted" | "denied" = "granted") =>
  Effect.gen(function*() {
    const shown = yield* card(approvalId)
    return yield* person("POST", `/tasks/${shown.taskId}/approvals/${approvalId}/decide`, { decision, digest: shown.operationDigest })
  })

export const filesOf = (conversationId: string) =>
  Effect.map(TestNode, (node) => query(node.dataDir, "SELECT id, state, size_bytes AS size FROM artifacts WHERE conversation_id = ?", conversationId))

export const audited = (kind: string) => Effect.flatMap(service(AuditLog), (log) => log.list({ kind }))
